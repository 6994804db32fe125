// The cart (second tab): each line with its SKU's price and what the API says is left
// (never more), the per-buyer limit when the API gives one, a quantity from 1 to what
// may be bought, and Remove; the delivery address (wx.chooseAddress, address.js) when a
// line ships; the total; and "提交订单": the whole cart as one POST /orders, then the pay
// page. A line asking for more than is left or allowed is shown so and holds the order
// back until changed.
//
// The order's Idempotency-Key belongs to the body it was made for (lines and address):
// every send of that body keeps it (the API module's own retries, and a tap again after
// the network failed or the shop was busy), so that one cart is never reserved twice; a
// changed cart or address, or the API's answer for good (an order, or a refusal), makes
// a new one.
'use strict';
const { newIdempotencyKey } = require('../../api.js');
const config = require('../../config.js');
const cart = require('../../cart.js');
const { pickAddress, keptAddress, addressLines } = require('../../address.js');
const { askSubscriptions } = require('../../subscribe.js');
const { yuan, canBuy, stockNote, messageFor, definitive } = require('../../view.js');
const { strings, t } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/**
 * One line as shown: max the most that may be bought (0: none), over when qty is above it.
 * @typedef {{ skuId: string, name: string, price: string, qty: number, max: number,
 *   note: string, limit: string, live: boolean, over: string, ships: boolean }} Row
 * @typedef {{ rows: Row[], loaded: boolean, total: string, address: { who: string, where: string } | null,
 *   needAddress: boolean, canSubmit: boolean, busy: boolean, error: string,
 *   t: import('../../i18n.js').Table }} Data
 */

Page({
  data: /** @type {Data} */ ({
    rows: [], loaded: false, total: '', address: null, needAddress: false, canSubmit: false,
    busy: false, error: '', t: strings(),
  }),
  /** the Idempotency-Key of the order being placed, and the body it was made for */
  key: '',
  keyBody: '',

  onShow() {
    this.load();
  },

  onPullDownRefresh() {
    this.load().then(() => wx.stopPullDownRefresh());
  },

  /** load reads every SKU of the cart from the API and shows the cart. */
  async load() {
    const lines = cart.readCart(wx);
    try {
      const skus = await Promise.all(lines.map((l) => app.api.getSku(l.skuId)));
      const now = app.api.now();
      /** @type {Row[]} */
      const rows = lines.map((l, i) => {
        const sku = skus[i];
        const live = canBuy(sku, now);
        const limit = sku.limitPerUser && sku.limitPerUser > 0 ? sku.limitPerUser : cart.MAX_QTY;
        const max = live ? Math.min(sku.available, limit, cart.MAX_QTY) : 0;
        return {
          skuId: l.skuId, name: sku.name, price: yuan(sku.price), qty: l.qty, max, live,
          note: stockNote(sku, now), ships: sku.delivery !== 'none',
          limit: limit < cart.MAX_QTY ? t('limitPerUser', { n: limit }) : '',
          over: !live ? t('cannotBuy') : l.qty > max ? t('overAvailable', { n: max }) : '',
        };
      });
      /** @type {Record<string, number>} */
      const prices = {};
      skus.forEach((s) => { prices[s.skuId] = s.price; });
      this.prices = prices;
      this.setData({ rows, loaded: true });
      this.refresh();
    } catch (err) {
      this.setData({ error: messageFor(err), loaded: true });
    }
  },

  /** @type {Record<string, number>} fen a unit, by SKU, as last read */
  prices: {},

  /** refresh recomputes the total, the address and whether the order may be placed. */
  refresh() {
    const rows = this.data.rows;
    const total = rows.reduce((sum, r) => sum + (this.prices[r.skuId] || 0) * r.qty, 0);
    const needAddress = rows.some((r) => r.ships);
    const kept = keptAddress(wx);
    this.setData({
      total: yuan(total), needAddress, address: kept ? addressLines(kept) : null,
      canSubmit: rows.length > 0 && rows.every((r) => !r.over) && (!needAddress || !!kept),
    });
  },

  /**
   * changeQty sets a line's quantity within 1..max and shows it again.
   * @param {string} skuId
   * @param {number} delta
   */
  changeQty(skuId, delta) {
    const row = this.data.rows.find((r) => r.skuId === skuId);
    if (!row || this.data.busy) return;
    const qty = Math.max(1, Math.min(row.qty + delta, Math.max(row.max, 1)));
    cart.setQty(wx, skuId, qty);
    const rows = this.data.rows.map((r) => (r.skuId === skuId
      ? { ...r, qty, over: !r.live ? t('cannotBuy') : qty > r.max ? t('overAvailable', { n: r.max }) : '' } : r));
    this.setData({ rows });
    this.refresh();
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { skuId: string }>} e */
  less(e) {
    this.changeQty(e.currentTarget.dataset.skuId, -1);
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { skuId: string }>} e */
  more(e) {
    this.changeQty(e.currentTarget.dataset.skuId, 1);
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { skuId: string }>} e */
  remove(e) {
    if (this.data.busy) return;
    const skuId = e.currentTarget.dataset.skuId;
    cart.removeLine(wx, skuId);
    this.setData({ rows: this.data.rows.filter((r) => r.skuId !== skuId) });
    this.refresh();
  },

  async chooseAddress() {
    if (this.data.busy) return;
    try {
      await pickAddress(wx);
      this.setData({ error: '' });
    } catch (err) {
      this.setData({ error: messageFor(err) });
    }
    this.refresh();
  },

  async submit() {
    if (this.data.busy) return;
    const address = keptAddress(wx);
    if (this.data.needAddress && !address) {
      this.setData({ error: t('addressNeeded') });
      return;
    }
    if (!this.data.canSubmit) return;
    // The subscribe messages are asked for first: WeChat shows the dialog only from a
    // tap. Whatever the buyer answers (or if the dialog fails), the order goes on.
    const asked = askSubscriptions(config.subscribeTemplates);
    const items = this.data.rows.map((r) => ({ skuId: r.skuId, qty: r.qty }));
    const body = JSON.stringify({ items, address: this.data.needAddress ? address : null });
    if (body !== this.keyBody) {
      this.key = newIdempotencyKey();
      this.keyBody = body;
    }
    this.setData({ busy: true, error: '' });
    try {
      const subscriptions = await asked;
      const order = await app.api.createOrder(items, this.key, subscriptions, this.data.needAddress && address ? address : undefined);
      this.keyBody = '';
      cart.clearCart(wx);
      this.setData({ rows: [] });
      wx.navigateTo({ url: `/pages/pay/index?orderId=${encodeURIComponent(order.orderId)}` });
    } catch (err) {
      const row = err && typeof err === 'object' && 'skuId' in err ? this.data.rows.find((r) => r.skuId === err.skuId) : undefined;
      this.setData({ error: row ? `${row.name}：${messageFor(err)}` : messageFor(err) });
      if (definitive(err)) {
        this.keyBody = '';
        this.load(); // e.g. STOCK_OUT: show what is left now
      }
    } finally {
      this.setData({ busy: false });
    }
  },
});
