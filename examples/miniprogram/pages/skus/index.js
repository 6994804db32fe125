// Product list (first tab): the SKUs on sale or upcoming, a page at a time (GET /skus,
// public: no sign-in), each with its price and what is left as the API says. Pull down
// to reload; the next page loads at the bottom of the list.
'use strict';
const { yuan, stockNote, canBuy } = require('../../view.js');
const { listHandlers, emptyList } = require('../../paging.js');
const { strings } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/**
 * One row of the list.
 * @typedef {{ skuId: string, name: string, price: string, note: string, live: boolean }} Row
 */

/**
 * @param {string} after
 * @returns {Promise<{ items: Row[], next?: string }>}
 */
async function fetchRows(after) {
  const page = await app.api.listSkus(after);
  const now = app.api.now();
  return {
    next: page.next,
    items: page.skus.map((sku) => ({
      skuId: sku.skuId, name: sku.name, price: yuan(sku.price),
      note: stockNote(sku, now), live: canBuy(sku, now),
    })),
  };
}

Page({
  data: { ...(/** @type {import('../../paging.js').ListData<Row>} */ (emptyList())), t: strings() },
  ...listHandlers(fetchRows),

  onLoad() {
    this.more(true);
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { skuId: string }>} e */
  open(e) {
    wx.navigateTo({ url: `/pages/sku/index?skuId=${encodeURIComponent(e.currentTarget.dataset.skuId)}` });
  },
});
