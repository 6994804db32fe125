// Order detail: status, lines, amount, the delivery address, the parcel's path (the
// shipments the shop sent: type, carrier, tracking number, what is in each, when
// uploaded), whether receipt is confirmed, the refunds made (refunds[], each with its
// status, and their sum) and the after-sale requests, and the buttons the API's rules
// allow: Pay and Cancel while PENDING; Refund while PAID within the shop's refund window
// (config.js refundWindowSeconds, the API's UserRefundWindow) with something left to
// refund and nothing shipped; 申请售后 while PAID with something left to refund; 确认收货
// once WeChat holds the shipping (view.js canConfirmReceipt); 更换 (the address) while
// PENDING or PAID and nothing shipped (view.js canChangeAddress): WeChat's address picker,
// then PUT /orders/{orderId}/address with its answer (wx.request sends no PATCH).
//
// 确认收货 opens WeChat's own confirm-receipt component (WeChat developer documentation,
// 小程序确认收货组件接入说明: wx.openBusinessView with businessType 'weappOrderConfirm' and
// extraData { transaction_id }, base library 2.6.0 or later;
// https://developers.weixin.qq.com/miniprogram/dev/platform-capabilities/business-capabilities/order-shipping/order-shipping-half.html).
// The component's answer (extraData.status success / fail / cancel) is not taken as the
// receipt: the same page says to check it on the server, so the page reads the order
// again and shows the API's `receipt`, which WeChat's settlement event sets.
'use strict';
const {
  yuan, when, statusText, refunded, canPay, canCancel, canRefund, messageFor, receiptState,
  canConfirmReceipt, canAftersale, canChangeAddress,
} = require('../../view.js');
const { addressLines, pickAddress } = require('../../address.js');
const { strings, t } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/**
 * @typedef {{ skuId: string, qty: number, price: string }} Line
 * @typedef {{ id: string, text: string, when: string, error: string }} RefundRow
 * @typedef {{ id: string, kind: string, parcel: string, items: string, when: string }} ShipmentRow
 * @typedef {{ order: import('../../api.js').Order | null, status: string, amount: string,
 *   placed: string, lines: Line[], refunds: RefundRow[], refunded: string,
 *   address: { who: string, where: string } | null, shipments: ShipmentRow[], receipt: string,
 *   aftersales: { id: string, text: string }[],
 *   canPay: boolean, canCancel: boolean, canRefund: boolean, canConfirm: boolean,
 *   canAftersale: boolean, canChangeAddress: boolean, busy: boolean,
 *   error: string, orderLabel: string, t: import('../../i18n.js').Table }} Data
 */

/** @type {Record<string, string>} the i18n key of each shipment type */
const SHIP_TYPE_KEYS = {
  express: 'shipTypeExpress', 'same-city': 'shipTypeSameCity', virtual: 'shipTypeVirtual', 'self-pickup': 'shipTypeSelfPickup',
};

/**
 * receiptText: 已于 … 确认收货 once confirmed (with its time when the API gives it).
 * @param {import('../../api.js').Order} order
 * @returns {string}
 */
function receiptText(order) {
  if (receiptState(order) !== 'CONFIRMED') return '';
  const at = order.receipt && order.receipt.confirmedAt ? when(order.receipt.confirmedAt) : '';
  return at ? t('receivedAt', { time: at }) : t('received');
}

Page({
  data: /** @type {Data} */ ({
    order: null, status: '', amount: '', placed: '', lines: [], refunds: [], refunded: '',
    address: null, shipments: [], receipt: '', aftersales: [],
    canPay: false, canCancel: false, canRefund: false, canConfirm: false, canAftersale: false,
    canChangeAddress: false, busy: false, error: '', orderLabel: '', t: strings(),
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
      address: order.address ? addressLines(order.address) : null,
      shipments: (order.shipments || []).map((s, i) => ({
        id: s.shipmentId || String(i + 1),
        kind: t(SHIP_TYPE_KEYS[s.type] || 'shipTypeExpress'),
        parcel: s.carrier || s.tracking ? t('shipment', { carrier: s.carrier || '', tracking: s.tracking || '' }).trim() : '',
        items: (s.items || []).map((it) => `${it.skuId} × ${it.qty}`).join(', '),
        when: s.uploadedAt ? t('uploadedAt', { time: when(s.uploadedAt) }) : '',
      })),
      receipt: receiptText(order),
      aftersales: (order.aftersales || []).map((a) => ({
        id: a.aftersaleId,
        text: t('aftersaleLine', { kind: t(a.kind === 'refund' ? 'kindRefund' : 'kindReturnRefund'), status: t(`aftersale${a.status}`) }),
      })),
      canConfirm: !this.data.busy && canConfirmReceipt(order),
      canAftersale: !this.data.busy && canAftersale(order),
      canChangeAddress: !this.data.busy && canChangeAddress(order),
      canPay: !this.data.busy && canPay(order, now),
      canCancel: !this.data.busy && canCancel(order),
      canRefund: !this.data.busy && canRefund(order, now, app.refundWindowSeconds),
    });
  },

  pay() {
    wx.navigateTo({ url: `/pages/pay/index?orderId=${encodeURIComponent(this.orderId)}` });
  },

  confirmReceipt() {
    const order = this.data.order;
    if (!order || !order.transactionId || this.data.busy) return;
    const w = /** @type {WechatMiniprogram.Wx & { openBusinessView?: (o: object) => void }} */ (wx);
    if (!w.openBusinessView) {
      this.setData({ error: t('upgradeWeChat') });
      return;
    }
    w.openBusinessView({
      businessType: 'weappOrderConfirm',
      extraData: { transaction_id: order.transactionId },
      success: () => this.load(), // whatever the component says: the API's receipt
      fail: (/** @type {{ errMsg: string }} */ err) => this.setData({ error: messageFor(err) }),
    });
  },

  /**
   * changeAddress: WeChat's address picker, then the order's new address (PUT); a closed
   * picker or a refused permission changes nothing.
   */
  async changeAddress() {
    if (this.data.busy) return;
    try {
      const address = await pickAddress(wx);
      if (!address) return;
      this.setData({ busy: true, error: '', canChangeAddress: false });
      const order = await app.api.changeAddress(this.orderId, address);
      this.setData({ busy: false });
      this.show(order);
    } catch (err) {
      const busy = this.data.busy;
      this.setData({ busy: false });
      if (busy) await this.load(); // what the order is now, e.g. shipped meanwhile
      this.setData({ error: messageFor(err) });
    }
  },

  aftersale() {
    wx.navigateTo({ url: `/pages/aftersale/index?orderId=${encodeURIComponent(this.orderId)}` });
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
    this.setData({ busy: true, error: '', canPay: false, canCancel: false, canRefund: false, canConfirm: false, canAftersale: false });
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
