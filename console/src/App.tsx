import { useCallback, useEffect, useMemo, useState } from 'react';
import { Button, ConfigProvider, Layout, Menu, Message, Space, Tag } from '@arco-design/web-react';
import zhCNArco from '@arco-design/web-react/es/locale/zh-CN';
import enUSArco from '@arco-design/web-react/es/locale/en-US';
import { useTranslation } from 'react-i18next';
import type { User, UserManager } from 'oidc-client-ts';
import type { ConsoleConfig } from './config';
import { roleOf, signOut } from './auth';
import { Api, ApiError } from './api';
import { setLocale } from './i18n';
import { Ctx, type Session } from './session';
import { Skus } from './pages/Skus';
import { LiveSale } from './pages/LiveSale';
import { Orders } from './pages/Orders';
import { Refunds } from './pages/Refunds';
import { Reconcile } from './pages/Reconcile';

const pages = ['skus', 'live', 'orders', 'refunds', 'reconcile'] as const;
type Page = (typeof pages)[number];

/** The page named by the location's hash (#/orders/ID → orders, ID). */
function useHashRoute(): [Page, string, (p: Page, arg?: string) => void] {
  const read = (): [Page, string] => {
    const [, p = 'skus', arg = ''] = window.location.hash.split('/');
    return [(pages as readonly string[]).includes(p) ? (p as Page) : 'skus', decodeURIComponent(arg)];
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  const go = useCallback((p: Page, arg = '') => { window.location.hash = '/' + p + (arg ? '/' + encodeURIComponent(arg) : ''); }, []);
  return [route[0], route[1], go];
}

export function App({ config, um, user }: { config: ConsoleConfig; um: UserManager; user: User }) {
  const { t, i18n } = useTranslation();
  const [page, arg, go] = useHashRoute();
  const role = roleOf(user.access_token);
  const api = useMemo(() => new Api(config.api, () => user.access_token, () => void um.signinRedirect()), [config, um, user]);
  const fail = useCallback((e: unknown) => {
    if (e instanceof ApiError) {
      const known = i18n.exists('errors.' + e.code);
      Message.error({ content: (known ? t('errors.' + e.code) : t('errors.generic')) + ` (${e.status} ${e.code}${known ? '' : ': ' + e.message})`, duration: 6000 });
    } else {
      Message.error(String(e));
    }
  }, [t, i18n]);
  const session: Session = { api, role, fail, go: (p, a) => go(p as Page, a), username: String(user.profile.preferred_username ?? user.profile.sub) };
  const zh = i18n.language === 'zh-CN';
  const menu = (mode: 'vertical' | 'horizontal') => (
    <Menu mode={mode} selectedKeys={[page]} onClickMenuItem={(k) => go(k as Page)}>
      {pages.map((p) => <Menu.Item key={p} data-page={p}>{t('nav.' + p)}</Menu.Item>)}
    </Menu>
  );
  return (
    <ConfigProvider locale={zh ? zhCNArco : enUSArco}>
      <Ctx.Provider value={session}>
        <Layout style={{ minHeight: '100vh' }}>
          <div className="top">
            <span className="brand">{t('app.title')}</span>
            <Space>
              <span className="who">{session.username}</span>
              <Tag color={role === 'owner' ? 'arcoblue' : role === 'operator' ? 'green' : 'gray'} data-role={role}>{t('roles.' + role)}</Tag>
              <Button size="small" onClick={() => setLocale(zh ? 'en-US' : 'zh-CN')}>{t('app.language')}</Button>
              <Button size="small" id="sign-out" onClick={() => void signOut(um, config)}>{t('app.signOut')}</Button>
            </Space>
          </div>
          <div className="nav-mobile">{menu('horizontal')}</div>
          <Layout>
            <Layout.Sider width={180}>{menu('vertical')}</Layout.Sider>
            <Layout.Content className="page">
              {page === 'skus' && <Skus />}
              {page === 'live' && <LiveSale />}
              {page === 'orders' && <Orders orderId={arg} />}
              {page === 'refunds' && <Refunds />}
              {page === 'reconcile' && <Reconcile />}
            </Layout.Content>
          </Layout>
        </Layout>
      </Ctx.Provider>
    </ConfigProvider>
  );
}
