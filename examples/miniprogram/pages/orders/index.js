// My orders (second tab): the buyer's own orders, newest first, a page at a time
// (GET /orders, signed in silently). Shown again each time the tab opens, so an order
// just placed is at the top; pull down to reload; the next page loads at the bottom.
'use strict';
const { yuan, when, statusText } = require('../../view.js');
const { listHandlers, emptyList } = require('../../paging.js');
const { strings } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/**
 * One row of the list.
 * @typedef {{ orderId: string, status: string, amount: string, placed: string,
 *   summary: string }} Row
 */

/**
 * @param {string} after
 * @returns {Promise<{ items: Row[], next?: string }>}
 */
async function fetchRows(after) {
  const page = await app.api.listOrders(after);
  return {
    next: page.next,
    items: page.orders.map((o) => ({
      orderId: o.orderId, status: statusText(o.status), amount: yuan(o.amount),
      placed: when(o.createdAt),
      summary: o.items.map((it) => `${it.skuId} × ${it.qty}`).join(', '),
    })),
  };
}

Page({
  data: { ...(/** @type {import('../../paging.js').ListData<Row>} */ (emptyList())), t: strings() },
  ...listHandlers(fetchRows),

  onShow() {
    this.more(true);
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { orderId: string }>} e */
  open(e) {
    wx.navigateTo({ url: `/pages/order/index?orderId=${encodeURIComponent(e.currentTarget.dataset.orderId)}` });
  },
});
