// After-sale request (申请售后): the order's lines with what is left to refund of each
// (view.js refundableLines), a quantity per line from 0 to that (all of it at first),
// the kind (仅退款: refund; 退货退款: return-refund, the goods sent back first), and a
// reason; "提交申请" sends POST /orders/{orderId}/aftersales
// {"aftersaleId","kind","lines","reason"} (202, REQUESTED: the shop approves or
// rejects it) and goes back to the order. aftersaleId is the request's idempotency key,
// kept for every send of the same request (a tap again after the network failed or the
// shop was busy) and made anew once the request changed or the API answered for good.
'use strict';
const { newIdempotencyKey } = require('../../api.js');
const { yuan, refundableLines, messageFor, definitive } = require('../../view.js');
const { strings, t } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/** The longest reason the page takes (characters). */
const MAX_REASON = 200;

/**
 * @typedef {import('../../api.js').AftersaleKind} Kind
 * @typedef {{ skuId: string, price: string, max: number, qty: number }} Row
 * @typedef {{ loaded: boolean, rows: Row[], kind: Kind, reason: string, maxReason: number,
 *   busy: boolean, error: string, t: import('../../i18n.js').Table }} Data
 */

Page({
  data: /** @type {Data} */ ({
    loaded: false, rows: [], kind: 'return-refund', reason: '', maxReason: MAX_REASON,
    busy: false, error: '', t: strings(),
  }),
  orderId: '',
  /** the aftersaleId of the request being sent, and the body it was made for */
  key: '',
  keyBody: '',

  /** @param {Record<string, string | undefined>} query */
  onLoad(query) {
    this.orderId = query.orderId || '';
    this.load();
  },

  async load() {
    try {
      const order = await app.api.getOrder(this.orderId);
      const rows = refundableLines(order).filter((l) => l.qty > 0)
        .map((l) => ({ skuId: l.skuId, price: yuan(l.unitPrice), max: l.qty, qty: l.qty }));
      this.setData({ rows, loaded: true });
    } catch (err) {
      this.setData({ error: messageFor(err), loaded: true });
    }
  },

  /**
   * @param {string} skuId
   * @param {number} delta
   */
  changeQty(skuId, delta) {
    if (this.data.busy) return;
    this.setData({
      rows: this.data.rows.map((r) => (r.skuId === skuId ? { ...r, qty: Math.max(0, Math.min(r.max, r.qty + delta)) } : r)),
    });
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { skuId: string }>} e */
  less(e) {
    this.changeQty(e.currentTarget.dataset.skuId, -1);
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { skuId: string }>} e */
  more(e) {
    this.changeQty(e.currentTarget.dataset.skuId, 1);
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { kind: Kind }>} e */
  choose(e) {
    if (!this.data.busy) this.setData({ kind: e.currentTarget.dataset.kind });
  },

  /** @param {{ detail: { value: string } }} e the textarea's input event */
  typeReason(e) {
    this.setData({ reason: e.detail.value.slice(0, MAX_REASON) });
  },

  async submit() {
    if (this.data.busy) return;
    const lines = this.data.rows.filter((r) => r.qty > 0).map((r) => ({ skuId: r.skuId, qty: r.qty }));
    const reason = this.data.reason.trim();
    if (lines.length === 0) {
      this.setData({ error: t('chooseLines') });
      return;
    }
    if (!reason) {
      this.setData({ error: t('reasonNeeded') });
      return;
    }
    const kind = this.data.kind;
    const body = JSON.stringify({ kind, lines, reason });
    if (body !== this.keyBody) {
      this.key = newIdempotencyKey();
      this.keyBody = body;
    }
    this.setData({ busy: true, error: '' });
    try {
      await app.api.requestAftersale(this.orderId, { aftersaleId: this.key, kind, lines, reason });
      this.keyBody = '';
      wx.redirectTo({ url: `/pages/order/index?orderId=${encodeURIComponent(this.orderId)}` });
    } catch (err) {
      this.setData({ error: messageFor(err) });
      if (definitive(err)) {
        this.keyBody = '';
        this.load(); // e.g. REFUND_EXCEEDS_PAID: what is left now
      }
    } finally {
      this.setData({ busy: false });
    }
  },
});
