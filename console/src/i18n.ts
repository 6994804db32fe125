import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import zhCN from './locales/zh-CN';
import enUS from './locales/en-US';

export type Locale = 'zh-CN' | 'en-US';

const stored = (): Locale => (localStorage.getItem('locale') === 'en-US' ? 'en-US' : 'zh-CN');

// i18next with two bundles; Chinese unless the person chose English (kept in
// localStorage). Interpolation escaping is React's job.
void i18n.use(initReactI18next).init({
  resources: { 'zh-CN': { translation: zhCN }, 'en-US': { translation: enUS } },
  lng: stored(),
  fallbackLng: 'zh-CN',
  interpolation: { escapeValue: false },
});

export function setLocale(l: Locale): void {
  localStorage.setItem('locale', l);
  document.documentElement.lang = l;
  void i18n.changeLanguage(l);
}

export default i18n;
