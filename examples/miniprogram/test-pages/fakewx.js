// A wx for tests under node: wx.request answers from a route table the test gives, as
// the API would; logins, subscribe-message dialogs, payments, navigation, modals and
// storage are recorded.
'use strict';
const { WX_REQUEST_METHODS } = require('../api.js');

/**
 * fakeWx is a wx whose request answers from routes: { 'GET /skus/cup-01': handler } where
 * a handler gets { method, path, query, data, header } and returns { status, body,
 * header? } (or throws { errMsg } for a failed wx.request). A route key may end with '*'
 * to match any rest of the path. A method wx.request does not send (PATCH: see
 * api.js WX_REQUEST_METHODS) fails the request, as nothing would reach the API; the
 * failure's text is ours, the page does not give one. Every request is recorded in
 * wx.requests; navigation, modals, payment and storage are recorded too.
 */
function fakeWx(routes, {
  storage = {}, modal = true, payment = 'ok', date, subscribe = {}, address = [], settings = {}, businessView = 'success',
} = {}) {
  const wx = {
    requests: [],
    navigations: [],
    logins: 0,
    payments: [],
    modals: [],
    pullDownStopped: 0,
    storage: { ...storage },
    inflight: 0,
    request({ url, method = 'GET', data, header = {}, success, fail }) {
      const u = new URL(url);
      const req = { method, host: u.host, path: u.pathname, query: Object.fromEntries(u.searchParams), data, header };
      wx.requests.push(req);
      if (!WX_REQUEST_METHODS.includes(method)) {
        setImmediate(() => fail({ errMsg: `request:fail invalid method ${method}` }));
        return;
      }
      const key = `${method} ${u.pathname}`;
      const handler = routes[key] || Object.entries(routes).find(([k]) => k.endsWith('*') && key.startsWith(k.slice(0, -1)))?.[1];
      wx.inflight++;
      setImmediate(() => {
        wx.inflight--;
        if (!handler) {
          success({ statusCode: 404, data: { message: 'Not Found' }, header: {} });
          return;
        }
        let res;
        try {
          res = handler(req);
        } catch (err) {
          fail({ errMsg: err.errMsg || `request:fail ${err.message}` });
          return;
        }
        const h = { ...(res.header || {}) };
        if (date) h.Date = new Date(date()).toUTCString();
        success({ statusCode: res.status, data: res.body === undefined ? '' : res.body, header: h });
      });
    },
    login({ success }) {
      wx.logins++;
      success({ code: `code-${wx.logins}`, errMsg: 'login:ok' });
    },
    subscribeAsks: [],
    // requestSubscribeMessage answers each template id as subscribe says ('accept',
    // 'reject'; a missing id is rejected); subscribe.fail makes the dialog fail.
    requestSubscribeMessage({ tmplIds, success, fail }) {
      wx.subscribeAsks.push(tmplIds);
      setImmediate(() => {
        if (subscribe.fail) {
          fail({ errMsg: 'requestSubscribeMessage:fail cancel', errCode: 20004 });
          return;
        }
        const res = { errMsg: 'requestSubscribeMessage:ok' };
        for (const id of tmplIds) res[id] = subscribe[id] || 'reject';
        success(res);
      });
    },
    requestPayment(params) {
      wx.payments.push(params);
      setImmediate(() => (payment === 'ok' ? params.success({ errMsg: 'requestPayment:ok' }) : params.fail({ errMsg: `requestPayment:fail ${payment}` })));
    },
    getStorageSync(key) {
      return key in wx.storage ? wx.storage[key] : '';
    },
    setStorageSync(key, value) {
      wx.storage[key] = structuredClone(value);
    },
    removeStorageSync(key) {
      delete wx.storage[key];
    },
    navigateTo({ url }) {
      wx.navigations.push({ how: 'navigateTo', url });
    },
    redirectTo({ url }) {
      wx.navigations.push({ how: 'redirectTo', url });
    },
    switchTab({ url }) {
      wx.navigations.push({ how: 'switchTab', url });
    },
    toasts: [],
    addressAsks: 0,
    settingsOpened: 0,
    businessViews: [],
    // chooseAddress answers address[i] to the i-th ask (the last one again after the end):
    // an address object, or 'deny' (the permission refused: "chooseAddress:fail auth
    // deny") or 'cancel' (the buyer closed the picker).
    chooseAddress({ success, fail }) {
      const answer = address[Math.min(wx.addressAsks++, address.length - 1)];
      setImmediate(() => {
        if (answer === 'deny') fail({ errMsg: 'chooseAddress:fail auth deny' });
        else if (answer === 'cancel' || answer === undefined) fail({ errMsg: 'chooseAddress:fail cancel' });
        else success({ ...answer, nationalCode: '156', errMsg: 'chooseAddress:ok' });
      });
    },
    // openSetting answers the permissions as settings gives them ({'scope.address': true}).
    openSetting() {
      wx.settingsOpened++;
      return Promise.resolve({ authSetting: { ...settings }, errMsg: 'openSetting:ok' });
    },
    // openBusinessView records the call and answers as WeChat's confirm-receipt
    // component does: success with extraData.status ('success', 'fail', 'cancel').
    openBusinessView(params) {
      wx.businessViews.push({ businessType: params.businessType, extraData: params.extraData });
      setImmediate(() => params.success({ errMsg: 'openBusinessView:ok', extraData: { status: businessView } }));
    },
    showToast({ title }) {
      wx.toasts.push(title);
    },
    navigateBack() {
      wx.navigations.push({ how: 'navigateBack' });
    },
    showModal({ title, content }) {
      wx.modals.push({ title, content });
      return Promise.resolve({ confirm: modal, cancel: !modal });
    },
    stopPullDownRefresh() {
      wx.pullDownStopped++;
    },
  };
  return wx;
}

/** A token the fake API accepts, and the route that hands it out. */
const TOKEN = 'token-1';
const signIn = () => ({ status: 200, body: { token: TOKEN, expiresIn: 7200 } });
/** storage holding a valid session, so that pages do not sign in first. */
const signedIn = () => ({ 'stockguard.session': { token: TOKEN, expiresAt: Date.now() + 3_600_000 } });

/** json answers status with body. */
function json(status, body, header) {
  return () => ({ status, body, header });
}

module.exports = { fakeWx, json, TOKEN, signIn, signedIn };
