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
  assert.deepEqual(texts(page, '.order .badge'), ['待付款', '待发货']);
  assert.equal(wx.requests[0].header.Authorization, `Bearer ${TOKEN}`);
  page.instance.onReachBottom();
  await settle(wx);
  assert.deepEqual(wx.requests.map((r) => r.query.after), [undefined, 'p2']);
  assert.deepEqual(texts(page, '.order .badge'), ['待付款', '待发货', '已取消']);
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

test('the tabs 全部 / 待付款 / 待发货 / 待收货 / 售后 sort the orders by their state', async () => {
  const shippedOrder = (id, over) => order(id, '2026-03-01T09:00:00Z', {
    transactionId: 't1', shipping: { status: 'UPLOADED', uploadedAt: '2026-03-01T09:30:00Z' },
    shipments: [{ type: 'express', carrier: 'SF', tracking: 'SF1', uploadedAt: '2026-03-01T09:30:00Z' }], ...over,
  });
  const orders = [
    order('p1', '2026-03-01T12:00:00Z', { status: 'PENDING' }),
    order('s1', '2026-03-01T11:00:00Z'), // PAID, nothing shipped
    order('q1', '2026-03-01T10:30:00Z', { shipping: { status: 'QUEUED' } }), // shipped, upload under way
    shippedOrder('r1'),
    shippedOrder('c1', { receipt: { status: 'CONFIRMED', confirmedAt: '2026-03-02T09:00:00Z' } }),
    order('a1', '2026-03-01T08:00:00Z', { status: 'REFUNDING' }),
    order('a2', '2026-03-01T07:00:00Z', { refunds: [{ refundId: 'r', amount: 100, status: 'REFUNDED' }] }),
    order('a3', '2026-03-01T06:00:00Z', { status: 'REFUND_PENDING' }),
    shippedOrder('a4', { aftersales: [{ aftersaleId: 'x', kind: 'return-refund', status: 'REQUESTED' }] }),
    order('x1', '2026-03-01T05:00:00Z', { status: 'CANCELLED' }),
  ];
  const wx = fakeWx({ 'GET /orders': json(200, { orders }) }, { storage: signedIn() });
  const { page } = openPage('orders', { wx, show: true });
  await settle(wx);
  const tabs = page.querySelectorAll('.tab');
  assert.deepEqual(tabs.map((e) => e.dom.textContent.trim()), ['全部', '待付款', '待发货', '待收货', '售后']);
  const shown = {};
  for (const [i, name] of ['all', 'pending', 'toShip', 'toReceive', 'aftersale'].entries()) {
    await tap(page, tabs[i]);
    shown[name] = page.querySelectorAll('.order').length;
    shown[`${name}Badges`] = texts(page, '.order .badge');
  }
  assert.equal(shown.all, 10);
  assert.deepEqual(shown.pendingBadges, ['待付款']);
  assert.deepEqual(shown.toShipBadges, ['待发货', '待发货']); // s1, a2 (partly refunded, still to ship)
  assert.deepEqual(shown.toReceiveBadges, ['待收货', '待收货', '待收货']); // q1, r1, a4; c1 is received
  assert.equal(shown.aftersale, 4); // a1, a2, a3, a4
  assert.deepEqual(shown.aftersaleBadges, ['退款中', '待发货', '已付款，商家待退款', '待收货']);
  assert.equal(wx.requests.length, 1); // tabs filter what was loaded: no request each
});

test('a tab with nothing in it says so', async () => {
  const wx = fakeWx({ 'GET /orders': json(200, { orders: [order('p1', '2026-03-01T12:00:00Z', { status: 'PENDING' })] }) }, { storage: signedIn() });
  const { page } = openPage('orders', { wx, show: true });
  await settle(wx);
  await tap(page, page.querySelectorAll('.tab')[4]);
  assert.equal(text(page, '#empty'), '这里没有订单');
});
