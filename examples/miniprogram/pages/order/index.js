// Order page: status, the payment countdown, pay (wx.requestPayment) and cancel.
const { secondsLeft, yuan } = require('../../api.js');

Page({
  data: { order: null, amount: '', left: 0, busy: false, error: '' },

  onLoad(query) {
    this.orderId = query.orderId;
    this.load();
  },

  onUnload() {
    clearInterval(this.timer);
  },

  async load() {
    try {
      this.show(await getApp().api.getOrder(this.orderId));
    } catch (err) {
      this.setData({ error: err.message });
    }
  },

  show(order) {
    this.setData({ order, amount: yuan(order.amount), left: secondsLeft(order, Date.now()) });
    clearInterval(this.timer);
    if (order.status === 'PENDING') {
      this.timer = setInterval(() => {
        const left = secondsLeft(order, Date.now());
        this.setData({ left });
        if (left === 0) {
          clearInterval(this.timer);
          this.load(); // released at expiry: shows CANCELLED
        }
      }, 1000);
    }
  },

  async pay() {
    const api = getApp().api;
    this.setData({ busy: true, error: '' });
    try {
      await api.pay(this.orderId);
      this.show(await api.waitForStatus(this.orderId, ['PAID', 'REFUND_PENDING']));
    } catch (err) {
      if (err.errMsg && err.errMsg.includes('cancel')) {
        this.setData({ error: '' }); // the buyer closed the payment sheet
      } else {
        const messages = { ORDER_NOT_PAYABLE: 'This order can no longer be paid', BUSY: 'WeChat Pay is busy, try again' };
        this.setData({ error: messages[err.code] || err.message || err.errMsg });
      }
      this.load();
    } finally {
      this.setData({ busy: false });
    }
  },

  async cancel() {
    this.setData({ busy: true, error: '' });
    try {
      this.show(await getApp().api.cancel(this.orderId));
    } catch (err) {
      this.setData({ error: err.code === 'ORDER_NOT_CANCELLABLE' ? 'Already paid' : err.message });
      this.load();
    } finally {
      this.setData({ busy: false });
    }
  },
});
