// Checkout: the quantity (1 to what the API says is available, at most the API's 9999 a
// line), the total, and "Place order": POST /orders, then the pay page. The order's
// Idempotency-Key stays the same for every send of one order: the API module's own
// retries, and a tap again after the network failed or the shop was busy, so that one
// order is never reserved twice. A new key is made once the API has answered for good
// (an order, or a refusal) or the quantity changed.
'use strict';
const { newIdempotencyKey } = require('../../api.js');
const config = require('../../config.js');
const { yuan, canBuy, stockNote, messageFor, definitive } = require('../../view.js');
const { strings } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/** The API's largest qty of one line. */
const MAX_QTY = 9999;

/**
 * @typedef {{ sku: import('../../api.js').Sku | null, price: string, note: string,
 *   qty: number, max: number, total: string, canBuy: boolean, busy: boolean,
 *   error: string, t: import('../../i18n.js').Table }} Data
 */

Page({
  data: /** @type {Data} */ ({
    sku: null, price: '', note: '', qty: 1, max: 1, total: '', canBuy: false, busy: false, error: '', t: strings(),
  }),
  skuId: '',
  /** the Idempotency-Key of the order being placed */
  key: '',

  /** @param {Record<string, string | undefined>} query */
  onLoad(query) {
    this.skuId = query.skuId || '';
    this.key = newIdempotencyKey();
    this.load(Number(query.qty) || 1);
  },

  /** @param {number} qty the quantity wanted, kept if still available */
  async load(qty) {
    try {
      const sku = await app.api.getSku(this.skuId);
      const now = app.api.now();
      this.setData({
        sku, price: yuan(sku.price), note: stockNote(sku, now), canBuy: canBuy(sku, now),
        max: Math.max(1, Math.min(sku.available, MAX_QTY)),
      });
      this.setQty(qty);
    } catch (err) {
      this.setData({ error: messageFor(err) });
    }
  },

  /** @param {number} qty */
  setQty(qty) {
    const q = Math.min(Math.max(1, Math.floor(qty) || 1), this.data.max);
    if (q !== this.data.qty) this.key = newIdempotencyKey(); // another order now
    const sku = this.data.sku;
    this.setData({ qty: q, total: sku ? yuan(sku.price * q) : '' });
  },

  less() {
    this.setQty(this.data.qty - 1);
  },

  more() {
    this.setQty(this.data.qty + 1);
  },

  async submit() {
    if (this.data.busy || !this.data.canBuy) return;
    // The subscribe messages are asked for first: WeChat shows the dialog only from a
    // tap. Whatever the buyer answers (or if the dialog fails), the order goes on.
    const asked = askSubscriptions(config.subscribeTemplates);
    this.setData({ busy: true, error: '' });
    try {
      const subscriptions = await asked;
      const order = await app.api.createOrder([{ skuId: this.skuId, qty: this.data.qty }], this.key, subscriptions);
      this.key = newIdempotencyKey();
      wx.redirectTo({ url: `/pages/pay/index?orderId=${encodeURIComponent(order.orderId)}` });
    } catch (err) {
      this.setData({ error: messageFor(err) });
      if (definitive(err)) {
        this.key = newIdempotencyKey();
        this.load(this.data.qty); // e.g. STOCK_OUT: show what is left now
      }
    } finally {
      this.setData({ busy: false });
    }
  },
});

/**
 * askSubscriptions asks the buyer for the one-time subscribe templates
 * (wx.requestSubscribeMessage, at most 3 a call) and resolves to the ids accepted;
 * [] when there are none to ask for, the buyer refused, or the dialog failed.
 * @param {string[]} tmplIds
 * @returns {Promise<string[]>}
 */
function askSubscriptions(tmplIds) {
  if (tmplIds.length === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    wx.requestSubscribeMessage({
      tmplIds: tmplIds.slice(0, 3),
      success(res) {
        const answers = /** @type {Record<string, string>} */ (/** @type {unknown} */ (res));
        resolve(tmplIds.filter((id) => answers[id] === 'accept'));
      },
      fail() {
        resolve([]);
      },
    });
  });
}
