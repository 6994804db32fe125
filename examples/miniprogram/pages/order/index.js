// Order detail: status, lines, amount, the refunds made (refunds[], each with its
// status, and their sum), and the buttons the API's
// rules allow: Pay and Cancel while PENDING, Refund while PAID within the shop's refund
// window (config.js refundWindowSeconds, the API's UserRefundWindow) with something left
// to refund.
'use strict';
const {
  yuan, when, statusText, refunded, canPay, canCancel, canRefund, messageFor,
} = require('../../view.js');
const { strings, t } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/**
 * @typedef {{ skuId: string, qty: number, price: string }} Line
 * @typedef {{ id: string, text: string, when: string, error: string }} RefundRow
 * @typedef {{ order: import('../../api.js').Order | null, status: string, amount: string,
 *   placed: string, lines: Line[], refunds: RefundRow[], refunded: string,
 *   canPay: boolean, canCancel: boolean, canRefund: boolean, busy: boolean,
 *   error: string, orderLabel: string, t: import('../../i18n.js').Table }} Data
 */

Page({
  data: /** @type {Data} */ ({
    order: null, status: '', amount: '', placed: '', lines: [], refunds: [], refunded: '',
    canPay: false, canCancel: false, canRefund: false, busy: false, error: '',
    orderLabel: '', t: strings(),
  }),
  orderId: '',

  /** @param {Record<string, string | undefined>} query */
  onLoad(query) {
    this.orderId = query.orderId || '';
    this.load();
  },

  onShow() {
    if (this.data.order) this.load(); // back from paying
  },

  onPullDownRefresh() {
    this.load().then(() => wx.stopPullDownRefresh());
  },

  async load() {
    try {
      this.show(await app.api.getOrder(this.orderId));
      this.setData({ error: '' });
    } catch (err) {
      this.setData({ error: messageFor(err) });
    }
  },

  /** @param {import('../../api.js').Order} order */
  show(order) {
    const now = app.api.now();
    const back = refunded(order);
    this.setData({
      order,
      status: statusText(order.status),
      amount: yuan(order.amount),
      orderLabel: t('order', { id: order.orderId }),
      placed: t('placed', { time: when(order.createdAt) }),
      lines: order.items.map((it) => ({ skuId: it.skuId, qty: it.qty, price: yuan(it.unitPrice) })),
      refunds: (order.refunds || []).map((r, i) => ({
        id: r.refundId || r.outRefundNo || String(i + 1),
        text: t('refundLine', { amount: yuan(r.amount), status: statusText(/** @type {import('../../api.js').OrderStatus} */ (r.status)) }), when: r.refundedAt ? when(r.refundedAt) : '', error: r.error || '',
      })),
      refunded: back > 0 ? yuan(back) : '',
      canPay: !this.data.busy && canPay(order, now),
      canCancel: !this.data.busy && canCancel(order),
      canRefund: !this.data.busy && canRefund(order, now, app.refundWindowSeconds),
    });
  },

  pay() {
    wx.navigateTo({ url: `/pages/pay/index?orderId=${encodeURIComponent(this.orderId)}` });
  },

  cancel() {
    return this.act(t('cancelTitle'), t('cancelContent'), () => app.api.cancel(this.orderId));
  },

  refund() {
    const order = this.data.order;
    const left = order ? yuan(order.amount - refunded(order)) : '';
    return this.act(t('refundTitle'), t('refundContent', { amount: left }), () => app.api.refund(this.orderId));
  },

  /**
   * act asks the buyer to confirm, then runs call and shows the order it answers.
   * @param {string} title
   * @param {string} content
   * @param {() => Promise<import('../../api.js').Order>} call
   */
  async act(title, content, call) {
    if (this.data.busy) return;
    const { confirm } = await wx.showModal({ title, content });
    if (!confirm) return;
    this.setData({ busy: true, error: '', canPay: false, canCancel: false, canRefund: false });
    try {
      const order = await call();
      this.setData({ busy: false });
      this.show(order);
    } catch (err) {
      this.setData({ busy: false });
      await this.load(); // what the order is now, e.g. paid meanwhile
      this.setData({ error: messageFor(err) });
    }
  },
});
