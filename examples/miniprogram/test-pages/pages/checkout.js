'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, text, attr, tap, json, signIn, signedIn, TOKEN } = require('../harness.js');

const cup = { skuId: 'cup-01', name: 'Limited artisan cup', price: 39900, currency: 'CNY', status: 'ON_SALE', available: 3 };
const order = (qty) => ({
  orderId: 'o123456', status: 'PENDING', items: [{ skuId: 'cup-01', qty, unitPrice: 39900 }], amount: 39900 * qty,
  currency: 'CNY', createdAt: '2026-03-01T12:00:00Z', expiresAt: '2026-03-01T12:15:00Z',
});

test('quantity from 1 up to what the API says is available; the total follows', async () => {
  const wx = fakeWx({ 'GET /skus/cup-01': json(200, cup) });
  const { page } = openPage('checkout', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  assert.equal(text(page, '#qty'), '1');
  assert.equal(attr(page, '#less', 'disabled'), true);
  for (let i = 0; i < 5; i++) await tap(page, '#more');
  assert.equal(text(page, '#qty'), '3');
  assert.equal(attr(page, '#more', 'disabled'), true);
  assert.equal(text(page, '#total'), '¥1197.00');
  await tap(page, '#less');
  assert.equal(text(page, '#total'), '¥798.00');
});

test('a busy API: the order is sent again after Retry-After with jitter, every send with the same Idempotency-Key', async () => {
  let sends = 0;
  const wx = fakeWx({
    'GET /skus/cup-01': json(200, cup),
    'POST /orders': () => (++sends < 3
      ? { status: 503, body: { code: 'BUSY', message: 'busy' }, header: { 'Retry-After': '1' } }
      : { status: 201, body: order(1) }),
  }, { storage: signedIn() });
  const { page, waits } = openPage('checkout', { wx, query: { skuId: 'cup-01' }, random: () => 0.5 });
  await settle(wx);
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.equal(posts.length, 3);
  assert.equal(new Set(posts.map((r) => r.header['Idempotency-Key'])).size, 1);
  assert.deepEqual(posts[0].data, { items: [{ skuId: 'cup-01', qty: 1 }] });
  assert.equal(posts[0].header.Authorization, `Bearer ${TOKEN}`);
  assert.deepEqual(waits, [1250, 1250]); // 1 s + half of 1 s × random 0.5
  assert.deepEqual(wx.navigations, [{ how: 'redirectTo', url: '/pages/pay/index?orderId=o123456' }]);
});

test('the API stays busy: three sends, then a clear message; a tap again is the same order (same key)', async () => {
  const wx = fakeWx({
    'GET /skus/cup-01': json(200, cup),
    'POST /orders': json(429, { code: 'RATE_LIMITED', message: 'slow down' }, { 'Retry-After': '2' }),
  }, { storage: signedIn() });
  const { page, waits } = openPage('checkout', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(text(page, '#error'), '当前人数较多，请2 秒后再试。');
  assert.equal(waits.length, 2);
  assert.ok(waits.every((ms) => ms >= 2000 && ms <= 3000));
  assert.equal(attr(page, '#submit', 'disabled'), false);
  await tap(page, '#submit');
  await settle(wx);
  const keys = wx.requests.filter((r) => r.method === 'POST').map((r) => r.header['Idempotency-Key']);
  assert.equal(keys.length, 6);
  assert.equal(new Set(keys).size, 1);
});

test('no network, then STOCK_OUT: the tap after the lost send keeps the key, the tap after the refusal gets a new one', async () => {
  let n = 0;
  const wx = fakeWx({
    'GET /skus/cup-01': json(200, cup),
    'POST /orders': () => {
      n++;
      if (n === 1) throw { errMsg: 'request:fail timeout' };
      if (n === 2) return { status: 409, body: { code: 'STOCK_OUT', message: 'stock out', skuId: 'cup-01' } };
      return { status: 201, body: order(1) };
    },
  }, { storage: signedIn() });
  const { page } = openPage('checkout', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(text(page, '#error'), '无法连接到商城，请检查网络后重试。');
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(text(page, '#error'), '库存不足，无法购买这么多。');
  await tap(page, '#submit');
  await settle(wx);
  const keys = wx.requests.filter((r) => r.method === 'POST').map((r) => r.header['Idempotency-Key']);
  assert.equal(keys.length, 3);
  assert.equal(keys[0], keys[1]);
  assert.notEqual(keys[1], keys[2]);
  assert.equal(wx.requests.filter((r) => r.path === '/skus/cup-01').length, 2); // read again after STOCK_OUT
  assert.deepEqual(wx.navigations, [{ how: 'redirectTo', url: '/pages/pay/index?orderId=o123456' }]);
});

test('a new quantity is a new order: a new key', async () => {
  const wx = fakeWx({
    'GET /skus/cup-01': json(200, cup),
    'POST /orders': () => { throw { errMsg: 'request:fail timeout' }; },
  }, { storage: signedIn() });
  const { page } = openPage('checkout', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  await tap(page, '#submit');
  await settle(wx);
  await tap(page, '#more');
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.deepEqual(posts.map((r) => r.data.items[0].qty), [1, 2]);
  assert.notEqual(posts[0].header['Idempotency-Key'], posts[1].header['Idempotency-Key']);
});

test('not signed in yet: one silent wx.login, the token kept in storage, then the order', async () => {
  const wx = fakeWx({
    'GET /skus/cup-01': json(200, cup),
    'POST /auth/wechat': signIn,
    'POST /orders': (req) => (req.header.Authorization === `Bearer ${TOKEN}`
      ? { status: 201, body: order(1) } : { status: 401, body: { message: 'Unauthorized' } }),
  });
  const { page } = openPage('checkout', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(wx.logins, 1);
  assert.deepEqual(wx.requests.map((r) => `${r.method} ${r.path}`), ['GET /skus/cup-01', 'POST /auth/wechat', 'POST /orders']);
  assert.deepEqual(wx.requests[1].data, { code: 'code-1' });
  assert.equal(wx.storage['stockguard.session'].token, TOKEN);
  assert.equal(wx.navigations.length, 1);
});

test('a SKU that sold out meanwhile: "Place order" is greyed', async () => {
  const wx = fakeWx({ 'GET /skus/cup-01': json(200, { ...cup, status: 'SOLD_OUT', available: 0 }) });
  const { page } = openPage('checkout', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  assert.equal(attr(page, '#submit', 'disabled'), true);
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(wx.requests.length, 1);
});

test('the tap asks for the subscribe messages first and sends the accepted template ids with the order', async () => {
  const wx = fakeWx({
    'GET /skus/cup-01': json(200, cup),
    'POST /orders': json(201, order(1)),
  }, { storage: signedIn(), subscribe: { 'local-pay-reminder': 'accept', 'local-refund-done': 'reject' } });
  const { page } = openPage('checkout', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  assert.deepEqual(wx.subscribeAsks, []); // nothing asked before the tap
  await tap(page, '#submit');
  await settle(wx);
  assert.deepEqual(wx.subscribeAsks, [['local-pay-reminder', 'local-refund-done']]);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.equal(posts.length, 1);
  assert.deepEqual(posts[0].data, { items: [{ skuId: 'cup-01', qty: 1 }], subscriptions: ['local-pay-reminder'] });
  assert.deepEqual(wx.navigations, [{ how: 'redirectTo', url: '/pages/pay/index?orderId=o123456' }]);
});

test('a failed subscribe dialog never stops the order: it goes without subscriptions', async () => {
  const wx = fakeWx({
    'GET /skus/cup-01': json(200, cup),
    'POST /orders': json(201, order(1)),
  }, { storage: signedIn(), subscribe: { fail: true } });
  const { page } = openPage('checkout', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.deepEqual(posts.map((r) => r.data), [{ items: [{ skuId: 'cup-01', qty: 1 }] }]);
  assert.equal(wx.navigations.length, 1);
});
