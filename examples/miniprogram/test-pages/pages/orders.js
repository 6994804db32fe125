'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, el, text, texts, tap, json, signIn, signedIn, TOKEN } = require('../harness.js');

const order = (orderId, createdAt, over) => ({
  orderId, status: 'PAID', items: [{ skuId: 'cup-01', qty: 1, unitPrice: 39900 }], amount: 39900, currency: 'CNY',
  createdAt, expiresAt: createdAt, ...over,
});

// Three orders, newest first, in pages of two, as GET /orders?after= answers them.
function mine() {
  return {
    'GET /orders': (req) => (req.query.after === 'p2'
      ? { status: 200, body: { orders: [order('o100001', '2026-03-01T10:00:00Z', { status: 'CANCELLED' })] } }
      : { status: 200, body: { orders: [order('o100003', '2026-03-01T12:00:00Z', { status: 'PENDING' }), order('o100002', '2026-03-01T11:00:00Z')], next: 'p2' } }),
  };
}

test('the buyer\'s orders as the API pages them (newest first), signed in, then the end', async () => {
  const wx = fakeWx(mine(), { storage: signedIn() });
  const { page } = openPage('orders', { wx, show: true });
  await settle(wx);
  assert.deepEqual(texts(page, '.order .badge'), ['待付款', '已付款']);
  assert.equal(wx.requests[0].header.Authorization, `Bearer ${TOKEN}`);
  page.instance.onReachBottom();
  await settle(wx);
  assert.deepEqual(wx.requests.map((r) => r.query.after), [undefined, 'p2']);
  assert.deepEqual(texts(page, '.order .badge'), ['待付款', '已付款', '已取消']);
  assert.equal(text(page, '#end'), '没有更多了');
  assert.equal(el(page, '#more'), undefined);
  await tap(page, page.querySelectorAll('.order')[2]);
  assert.deepEqual(wx.navigations, [{ how: 'navigateTo', url: '/pages/order/index?orderId=o100001' }]);
});

test('the tab shown again loads the newest orders again', async () => {
  const wx = fakeWx(mine(), { storage: signedIn() });
  const { page } = openPage('orders', { wx, show: true });
  await settle(wx);
  page.instance.onReachBottom();
  await settle(wx);
  page.instance.onShow();
  await settle(wx);
  assert.equal(texts(page, '.order').length, 2);
  assert.equal(wx.requests.at(-1).query.after, undefined);
});

test('a stored token the API refuses: one silent sign-in and the list', async () => {
  const wx = fakeWx({
    ...mine(),
    'GET /orders': (req) => (req.header.Authorization === `Bearer ${TOKEN}`
      ? mine()['GET /orders'](req) : { status: 401, body: { message: 'Unauthorized' } }),
    'POST /auth/wechat': signIn,
  }, { storage: { 'stockguard.session': { token: 'garbage', expiresAt: Date.now() + 3_600_000 } } });
  const { page } = openPage('orders', { wx, show: true });
  await settle(wx);
  assert.equal(wx.logins, 1);
  assert.deepEqual(wx.requests.map((r) => `${r.method} ${r.path}`), ['GET /orders', 'POST /auth/wechat', 'GET /orders']);
  assert.equal(texts(page, '.order').length, 2);
});

test('no orders yet', async () => {
  const wx = fakeWx({ 'GET /orders': json(200, { orders: [] }) }, { storage: signedIn() });
  const { page } = openPage('orders', { wx, show: true });
  await settle(wx);
  assert.equal(text(page, '#empty'), '还没有订单');
});
