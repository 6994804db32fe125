// Pay: the order's amount, the time left to pay (until its expiresAt, when the API
// releases the stock), and "Pay with WeChat": POST /orders/{orderId}/pay, then
// wx.requestPayment. The order turns PAID when WeChat Pay's notification reaches the API;
// the page waits for that, then opens the order.
'use strict';
const { yuan, msUntil, countdown, canPay, statusText, messageFor, cancelledByBuyer } = require('../../view.js');
const { strings, t } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/**
 * @typedef {{ order: import('../../api.js').Order | null, amount: string, status: string,
 *   left: string, canPay: boolean, busy: boolean, note: string, error: string,
 *   orderLabel: string, t: import('../../i18n.js').Table }} Data
 */

Page({
  data: /** @type {Data} */ ({
    order: null, amount: '', status: '', left: '', canPay: false, busy: false, note: '', error: '',
    orderLabel: '', t: strings(),
  }),
  orderId: '',
  /** setInterval handle of the countdown; 0 when none runs */
  timer: 0,
  /** the buyer has paid; the API has not heard from WeChat Pay yet: no second payment */
  confirming: false,

  /** @param {Record<string, string | undefined>} query */
  onLoad(query) {
    this.orderId = query.orderId || '';
    this.load();
  },

  onShow() {
    if (this.data.order) this.load();
  },

  onHide() {
    this.stopTimer();
  },

  onUnload() {
    this.stopTimer();
  },

  async load() {
    try {
      this.show(await app.api.getOrder(this.orderId));
    } catch (err) {
      this.setData({ error: messageFor(err) });
    }
  },

  /** @param {import('../../api.js').Order} order */
  show(order) {
    const wait = order.status === 'PENDING' ? msUntil(order.expiresAt, app.api.now()) : 0;
    this.setData({
      order, amount: yuan(order.amount), status: statusText(order.status),
      orderLabel: t('order', { id: order.orderId }), left: t('payWithin', { time: countdown(wait) }), canPay: !this.confirming && canPay(order, app.api.now()),
    });
    this.stopTimer();
    if (wait > 0) this.timer = setInterval(() => this.tick(), 1000);
  },

  tick() {
    if (!this.timer) return; // a tick already queued when the countdown stopped
    const order = this.data.order;
    if (!order) return;
    const wait = msUntil(order.expiresAt, app.api.now());
    this.setData({ left: t('payWithin', { time: countdown(wait) }), canPay: wait > 0 && !this.data.busy && !this.confirming });
    if (wait === 0) {
      this.stopTimer();
      this.load(); // released at expiry: the API shows it CANCELLED
    }
  },

  stopTimer() {
    if (this.timer) clearInterval(this.timer);
    this.timer = 0;
  },

  async pay() {
    if (this.data.busy || !this.data.canPay) return;
    this.setData({ busy: true, error: '', note: '' });
    try {
      await app.api.pay(this.orderId);
      this.confirming = true;
      const order = await app.api.waitForStatus(this.orderId, ['PAID', 'REFUND_PENDING', 'REFUNDING', 'REFUNDED', 'CANCELLED']);
      if (order.status === 'PENDING') {
        this.setData({ note: t('paymentConfirming') });
        this.show(order);
        return;
      }
      wx.redirectTo({ url: `/pages/order/index?orderId=${encodeURIComponent(this.orderId)}` });
    } catch (err) {
      this.setData({ error: cancelledByBuyer(err) ? t('paymentNotCompleted') : messageFor(err) });
      this.load();
    } finally {
      this.setData({ busy: false });
    }
  },
});
