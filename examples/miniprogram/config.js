// Where the API is and what the shop allows. For a deployment: baseURL = the API's
// custom domain (https, with an ICP 备案, listed as a request合法域名 of the
// mini-program; not the stack's execute-api ApiUrl: see README.md), pageURL = the
// page domain aliased to the stack's PageUrl, localBuyer = '', refundWindowSeconds =
// the stack's UserRefundWindow parameter.
'use strict';
module.exports = {
  /** the buyer's language: 'zh_CN' (default) or 'en' (i18n.js holds both) */
  locale: 'zh_CN',
  /** the API's base URL, no trailing slash; the local stack (go run ./cmd/local) by default */
  baseURL: 'http://127.0.0.1:3000',
  /**
   * Where the public SKU pages are read (GET /skus, GET /skus/{skuId}, and the waiting
   * room's line, GET /skus/{skuId}/line, read each second while a buyer waits), no trailing
   * slash: for a deployment, a request domain of its own aliased to the stack's
   * CloudFront distribution (the PageUrl output), so that the page costs the API one
   * read a second per SKU, not one per Lambda environment. '' reads them at baseURL.
   */
  pageURL: '',
  /**
   * Against the local stack only: its jscode2session stand-in accepts no code of
   * wx.login, only "test-<name>" (once per stack run; buyer openid "o-<name>"), so the
   * app signs in with "test-" + localBuyer; the token it keeps then lasts its 2 hours.
   * '' for a deployed API: wx.login's code.
   */
  localBuyer: 'alice',
  /**
   * Seconds after paying during which a buyer may refund by themselves: the API's
   * UserRefundWindow (cmd/local -user-refund-window). 0: no refund button.
   */
  refundWindowSeconds: 0,
  /**
   * The one-time subscribe-message templates the shop sends (the API's
   * PayReminderTemplateId, RefundDoneTemplateId and AftersaleTemplateId; the local
   * stack's by default): checkout asks the buyer for them with
   * wx.requestSubscribeMessage (at most 3 at once) and sends the accepted ids with the
   * order. [] asks nothing.
   */
  subscribeTemplates: ['local-pay-reminder', 'local-refund-done', 'local-aftersale'],
  /**
   * The one-time subscribe-message template of the waitlist (the API's waitlist template
   * id; the local stack's by default): "到货提醒" on a sold-out SKU asks the buyer for it
   * and joins the waitlist subscribed or not, as the buyer answered. [] asks nothing.
   */
  waitlistTemplates: ['local-waitlist'],
};
