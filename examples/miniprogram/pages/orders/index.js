// My orders (third tab): the buyer's own orders, newest first, a page at a time
// (GET /orders, signed in silently), under the tabs 全部 / 待付款 / 待发货 / 待收货 / 售后
// (view.js inTab maps docs/contract.md's order states to them). The API lists every
// order; a tab shows those of the pages loaded that belong to it, and "加载更多" loads the
// next page for every tab. Shown again each time the tab opens, so an order just placed
// is at the top; pull down to reload; the next page loads at the bottom.
'use strict';
const { yuan, when, statusText, TABS, inTab, shipped, receiptState } = require('../../view.js');
const { listHandlers, emptyList } = require('../../paging.js');
const { strings, t } = require('../../i18n.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/**
 * One row of the list: tabs, the tabs it is under.
 * @typedef {import('../../view.js').Tab} Tab
 * @typedef {{ orderId: string, status: string, amount: string, placed: string,
 *   summary: string, tabs: Tab[] }} Row
 * @typedef {import('../../paging.js').ListData<Row> & { tab: Tab, shown: Row[],
 *   tabList: { id: Tab, label: string }[], t: import('../../i18n.js').Table }} Data
 */

/** @type {Record<Tab, string>} */
const TAB_KEYS = { all: 'tabAll', pending: 'tabPending', toShip: 'tabToShip', toReceive: 'tabToReceive', aftersale: 'tabAftersale' };

/**
 * badge: the status a row shows: a PAID order as 待发货, 待收货 or 已收货.
 * @param {import('../../api.js').Order} o
 * @returns {string}
 */
function badge(o) {
  if (o.status !== 'PAID') return statusText(o.status);
  if (!shipped(o)) return t('toShip');
  return receiptState(o) === 'CONFIRMED' ? t('received') : t('toReceive');
}

/**
 * @param {string} after
 * @returns {Promise<{ items: Row[], next?: string }>}
 */
async function fetchRows(after) {
  const page = await app.api.listOrders(after);
  return {
    next: page.next,
    items: page.orders.map((o) => ({
      orderId: o.orderId, status: badge(o), amount: yuan(o.amount),
      placed: when(o.createdAt),
      summary: o.items.map((it) => `${it.skuId} × ${it.qty}`).join(', '),
      tabs: TABS.filter((tab) => inTab(o, tab)),
    })),
  };
}

const list = listHandlers(fetchRows);

Page({
  data: /** @type {Data} */ ({
    ...emptyList(), tab: 'all', shown: [], t: strings(),
    tabList: TABS.map((id) => ({ id, label: t(TAB_KEYS[id]) })),
  }),
  ...list,

  /** @param {boolean} reset */
  more(reset) {
    return list.more.call(this, reset).then(() => this.filter());
  },

  onShow() {
    this.more(true);
  },

  /** filter shows the rows of the chosen tab. */
  filter() {
    const tab = this.data.tab;
    this.setData({ shown: this.data.items.filter((r) => r.tabs.includes(tab)) });
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { tab: Tab }>} e */
  choose(e) {
    this.setData({ tab: e.currentTarget.dataset.tab });
    this.filter();
  },

  /** @param {WechatMiniprogram.BaseEvent<{}, { orderId: string }>} e */
  open(e) {
    wx.navigateTo({ url: `/pages/order/index?orderId=${encodeURIComponent(e.currentTarget.dataset.orderId)}` });
  },
});
