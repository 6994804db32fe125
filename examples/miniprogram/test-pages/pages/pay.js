'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, el, text, attr, tap, json, signedIn } = require('../harness.js');

const params = { timeStamp: '1767268800', nonceStr: 'n0nce', package: 'prepay_id=wx123', signType: 'RSA', paySign: 'c2lnbg==' };
const order = (over) => ({
  orderId: 'o123456', status: 'PENDING', items: [{ skuId: 'cup-01', qty: 1, unitPrice: 39900 }], amount: 39900,
  currency: 'CNY', createdAt: '2026-03-01T12:00:00Z', expiresAt: '2026-03-01T12:15:00Z', ...over,
});

test('amount and time left; Pay → POST /pay → wx.requestPayment with its parameters → PAID → the order page', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: Date.parse('2026-03-01T12:13:30Z') });
  let paid = false;
  const wx = fakeWx({
    'GET /orders/o123456': () => ({ status: 200, body: order(paid ? { status: 'PAID', paidAt: '2026-03-01T12:13:31Z' } : {}) }),
    'POST /orders/o123456/pay': () => { paid = true; return { status: 200, body: params }; },
  }, { storage: signedIn() });
  const { page } = openPage('pay', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  assert.equal(text(page, '#amount'), '¥399.00');
  assert.equal(text(page, '#left'), '请在 01:30 内付款');
  t.mock.timers.tick(1000);
  assert.equal(text(page, '#left'), '请在 01:29 内付款');
  assert.equal(attr(page, '#pay', 'disabled'), false);
  await tap(page, '#pay');
  await settle(wx);
  assert.equal(wx.payments.length, 1);
  const { success, fail, ...sent } = wx.payments[0];
  assert.deepEqual(sent, params);
  assert.deepEqual(wx.navigations, [{ how: 'redirectTo', url: '/pages/order/index?orderId=o123456' }]);
  page.instance.onUnload();
});

test('the buyer closes the payment sheet: "Payment not completed.", still payable', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: Date.parse('2026-03-01T12:00:00Z') });
  const wx = fakeWx({
    'GET /orders/o123456': json(200, order()),
    'POST /orders/o123456/pay': json(200, params),
  }, { storage: signedIn(), payment: 'cancel' });
  const { page } = openPage('pay', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  await tap(page, '#pay');
  await settle(wx);
  assert.equal(text(page, '#error'), '未完成付款。');
  assert.equal(attr(page, '#pay', 'disabled'), false);
  assert.deepEqual(wx.navigations, []);
  page.instance.onUnload();
});

test('time runs out: Pay greys at 00:00, the order is read again and shows released', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: Date.parse('2026-03-01T12:14:58Z') });
  let reads = 0;
  const wx = fakeWx({
    'GET /orders/o123456': () => (++reads === 1
      ? { status: 200, body: order() }
      : { status: 200, body: order({ status: 'CANCELLED', cancelReason: 'TIMEOUT', cancelledAt: '2026-03-01T12:15:00Z' }) }),
  }, { storage: signedIn() });
  const { page } = openPage('pay', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  assert.equal(text(page, '#left'), '请在 00:02 内付款');
  t.mock.timers.tick(1000);
  assert.equal(text(page, '#left'), '请在 00:01 内付款');
  t.mock.timers.tick(1000);
  assert.equal(attr(page, '#pay', 'disabled'), true);
  await settle(wx);
  assert.equal(reads, 2);
  assert.equal(text(page, '#status'), '已取消');
  assert.equal(el(page, '#pay'), undefined);
});

test('the order can no longer be paid: the API\'s 409 in plain words', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: Date.parse('2026-03-01T12:00:00Z') });
  const wx = fakeWx({
    'GET /orders/o123456': json(200, order()),
    'POST /orders/o123456/pay': json(409, { code: 'ORDER_NOT_PAYABLE', message: 'not payable' }),
  }, { storage: signedIn() });
  const { page } = openPage('pay', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  await tap(page, '#pay');
  await settle(wx);
  assert.equal(text(page, '#error'), '该订单已无法付款。');
  assert.equal(wx.payments.length, 0);
  page.instance.onUnload();
});

test('paid, but the API has not heard from WeChat Pay yet: "confirming", and no second payment', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: Date.parse('2026-03-01T12:00:00Z') });
  const wx = fakeWx({
    'GET /orders/o123456': json(200, order()),
    'POST /orders/o123456/pay': json(200, params),
  }, { storage: signedIn() });
  const { page, waits } = openPage('pay', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  await tap(page, '#pay');
  await settle(wx);
  assert.equal(waits.length, 19); // 20 reads of the order, 500 ms apart
  assert.ok(waits.every((ms) => ms === 500));
  assert.equal(text(page, '#note'), '已付款，商家正在确认。');
  assert.equal(attr(page, '#pay', 'disabled'), true);
  t.mock.timers.tick(1000);
  assert.equal(attr(page, '#pay', 'disabled'), true);
  await tap(page, '#pay');
  await settle(wx);
  assert.equal(wx.payments.length, 1);
  assert.deepEqual(wx.navigations, []);
  page.instance.onUnload();
});
