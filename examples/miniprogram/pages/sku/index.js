// SKU page: name, price, how many are left (or sold out), and a buy button.
const { yuan } = require('../../api.js');

Page({
  data: { sku: null, price: '', soldOut: false, buying: false, error: '' },

  onLoad(query) {
    this.skuId = query.skuId || 'cup-01';
    this.refresh();
  },

  onShow() {
    if (this.skuId) this.refresh();
  },

  async refresh() {
    try {
      const sku = await getApp().api.getSku(this.skuId);
      this.setData({
        sku, price: yuan(sku.price), error: '',
        soldOut: sku.status === 'SOLD_OUT' || sku.available === 0,
      });
    } catch (err) {
      this.setData({ error: err.message });
    }
  },

  async buy() {
    const api = getApp().api;
    this.setData({ buying: true, error: '' });
    try {
      if (!api.loggedIn()) await api.login();
      // One key per tap: a retried request never reserves twice.
      const key = `${this.skuId}-${Date.now()}`;
      const order = await api.createOrder([{ skuId: this.skuId, qty: 1 }], key);
      wx.navigateTo({ url: `/pages/order/index?orderId=${order.orderId}` });
    } catch (err) {
      const messages = { STOCK_OUT: 'Sold out', LIMIT_EXCEEDED: 'Purchase limit reached', BUSY: 'Busy, try again' };
      this.setData({ error: messages[err.code] || err.message });
      this.refresh();
    } finally {
      this.setData({ buying: false });
    }
  },
});
