// Product page: a SKU's name, price and what is left as the API says (never more), the
// countdown to its saleStartsAt, and the buy button, greyed while the SKU is SOLD_OUT,
// OFF_SALE or has nothing available, and while UPCOMING until the countdown ends. The
// countdown runs on the API's clock (api.now()), so a phone with a wrong clock does not
// open the button early. "加入购物车" adds one to the cart (cart.js); "立即购买" adds one and
// opens the cart, where the order is placed.
'use strict';
const { yuan, msUntil, countdown, canBuy, stockNote, messageFor } = require('../../view.js');
const { strings, t } = require('../../i18n.js');
const { addToCart } = require('../../cart.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/**
 * @typedef {{ sku: import('../../api.js').Sku | null, price: string, note: string,
 *   startsIn: string, canBuy: boolean, error: string, t: import('../../i18n.js').Table }} Data
 */

Page({
  data: /** @type {Data} */ ({ sku: null, price: '', note: '', startsIn: '', canBuy: false, error: '', t: strings() }),
  skuId: '',
  /** setInterval handle of the countdown; 0 when none runs */
  timer: 0,

  /** @param {Record<string, string | undefined>} query */
  onLoad(query) {
    this.skuId = query.skuId || '';
    this.load();
  },

  onShow() {
    if (this.data.sku) this.load(); // back from checkout: what is left has changed
  },

  onHide() {
    this.stopTimer();
  },

  onUnload() {
    this.stopTimer();
  },

  onPullDownRefresh() {
    this.load().then(() => wx.stopPullDownRefresh());
  },

  async load() {
    try {
      this.show(await app.api.getSku(this.skuId));
      this.setData({ error: '' });
    } catch (err) {
      this.setData({ error: messageFor(err) });
    }
  },

  /** @param {import('../../api.js').Sku} sku */
  show(sku) {
    const now = app.api.now();
    const wait = sku.status === 'UPCOMING' ? msUntil(sku.saleStartsAt, now) : 0;
    this.setData({
      sku, price: yuan(sku.price), note: stockNote(sku, now),
      startsIn: wait > 0 ? t('saleStartsIn', { time: countdown(wait) }) : '', canBuy: canBuy(sku, now),
    });
    this.stopTimer();
    if (wait > 0) this.timer = setInterval(() => this.tick(), 1000);
  },

  tick() {
    if (!this.timer) return; // a tick already queued when the countdown stopped
    const sku = this.data.sku;
    if (!sku) return;
    const wait = msUntil(sku.saleStartsAt, app.api.now());
    if (wait > 0) {
      this.setData({ startsIn: t('saleStartsIn', { time: countdown(wait) }) });
      return;
    }
    this.stopTimer();
    this.show(sku); // the sale has started: the button opens if anything is available
    this.load(); // and the API's word on what is left
  },

  stopTimer() {
    if (this.timer) clearInterval(this.timer);
    this.timer = 0;
  },

  buy() {
    if (!this.data.canBuy) return;
    addToCart(wx, this.skuId, 1);
    wx.switchTab({ url: '/pages/cart/index' });
  },

  add() {
    if (!this.data.canBuy) return;
    addToCart(wx, this.skuId, 1);
    wx.showToast({ title: t('addedToCart'), icon: 'success' });
  },
});
