// The app holds the one API object every page uses (getApp().api); creating it reads the
// token kept from an earlier run back from storage.
'use strict';
const { createApi } = require('./api.js');
const config = require('./config.js');

/**
 * The app's own fields, as the pages read them: getApp() typed as WechatMiniprogram.App.Instance<AppOption>.
 * @typedef {{ api: import('./api.js').Api, refundWindowSeconds: number }} AppOption
 */

App({
  api: createApi({
    baseURL: config.baseURL,
    pageURL: config.pageURL || config.baseURL,
    wx,
    loginCode: config.localBuyer ? async () => `test-${config.localBuyer}` : undefined,
  }),
  refundWindowSeconds: config.refundWindowSeconds,
});
