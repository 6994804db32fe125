'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, text, attr, tap, json } = require('../harness.js');

const sku = (over) => ({ skuId: 'cup-01', name: 'Limited artisan cup', price: 39900, currency: 'CNY', status: 'ON_SALE', available: 5, ...over });

test('SOLD_OUT: the buy button is greyed and says so; a tap goes nowhere', async () => {
  const wx = fakeWx({ 'GET /skus/cup-01': json(200, sku({ status: 'SOLD_OUT', available: 0 })) });
  const { page } = openPage('sku', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  assert.equal(attr(page, '#buy', 'disabled'), true);
  assert.equal(text(page, '#buy'), '已售罄');
  assert.equal(text(page, '#note'), '已售罄');
  await tap(page, '#buy');
  assert.deepEqual(wx.navigations, []);
});

test('OFF_SALE: greyed, "Not on sale"', async () => {
  const wx = fakeWx({ 'GET /skus/cup-01': json(200, sku({ status: 'OFF_SALE', available: 3 })) });
  const { page } = openPage('sku', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  assert.equal(attr(page, '#buy', 'disabled'), true);
  assert.equal(text(page, '#buy'), '已下架');
});

test('ON_SALE: what is left as the API says, price in yuan; buy puts one in the cart and opens it; no sign-in for a public page', async () => {
  const wx = fakeWx({ 'GET /skus/cup-01': json(200, sku({ status: 'LOW_STOCK', available: 2 })) });
  const { page } = openPage('sku', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  assert.equal(attr(page, '#buy', 'disabled'), false);
  assert.equal(text(page, '#note'), '仅剩 2 件');
  assert.equal(text(page, '.price'), '¥399.00');
  await tap(page, '#buy');
  assert.deepEqual(wx.navigations, [{ how: 'switchTab', url: '/pages/cart/index' }]);
  assert.deepEqual(wx.storage['stockguard.cart'], [{ skuId: 'cup-01', qty: 1 }]);
  assert.equal(wx.logins, 0);
  assert.equal(wx.requests[0].header.Authorization, undefined);
});

test('UPCOMING: counts down to saleStartsAt with the button greyed, then opens it and reads the SKU again', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: Date.parse('2026-03-01T11:59:57Z') });
  const startsAt = '2026-03-01T12:00:00Z';
  let reads = 0;
  const wx = fakeWx({
    'GET /skus/cup-01': () => {
      reads++;
      return { status: 200, body: sku({ status: reads === 1 ? 'UPCOMING' : 'ON_SALE', available: 30, saleStartsAt: startsAt }) };
    },
  });
  const { page } = openPage('sku', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  assert.equal(text(page, '#countdown'), '距开售 00:03');
  assert.equal(attr(page, '#buy', 'disabled'), true);
  assert.equal(text(page, '#note'), '即将开售 30 件');
  t.mock.timers.tick(1000);
  assert.equal(text(page, '#countdown'), '距开售 00:02');
  assert.equal(attr(page, '#buy', 'disabled'), true);
  t.mock.timers.tick(1000);
  assert.equal(text(page, '#countdown'), '距开售 00:01');
  t.mock.timers.tick(1000);
  assert.equal(text(page, '#countdown'), '');
  assert.equal(attr(page, '#buy', 'disabled'), false);
  await settle(wx);
  assert.equal(reads, 2);
  assert.equal(text(page, '#note'), '剩余 30 件');
  assert.equal(attr(page, '#buy', 'disabled'), false);
  page.instance.onUnload();
});

test('UPCOMING on a phone whose clock is an hour behind: the countdown follows the API\'s Date header', async (t) => {
  const phone = Date.parse('2026-03-01T11:00:00Z');
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: phone });
  const api = () => Date.now() + 3_600_000; // the API's clock
  const wx = fakeWx({
    'GET /skus/cup-01': () => ({ status: 200, body: sku({ status: 'UPCOMING', saleStartsAt: new Date(api() + 10_000).toISOString() }) }),
  }, { date: api });
  const { page } = openPage('sku', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  // Date has whole seconds; the page takes the middle of that second.
  assert.match(text(page, '#countdown'), /^距开售 00:(09|10)$/);
  assert.equal(attr(page, '#buy', 'disabled'), true);
  page.instance.onUnload();
});

test('an unknown SKU shows the API\'s refusal in plain words and no buy button', async () => {
  const wx = fakeWx({ 'GET /skus/nope': json(404, { code: 'SKU_NOT_FOUND', message: 'no such SKU', skuId: 'nope' }) });
  const { page } = openPage('sku', { wx, query: { skuId: 'nope' } });
  await settle(wx);
  assert.equal(text(page, '#error'), '该商品不存在。');
  assert.equal(text(page, '#buy'), '');
});

test('加入购物车 adds one more to the SKU\'s line each tap and stays on the page', async () => {
  const wx = fakeWx({ 'GET /skus/cup-01': json(200, sku()) }, { storage: { 'stockguard.cart': [{ skuId: 'mug-02', qty: 1 }] } });
  const { page } = openPage('sku', { wx, query: { skuId: 'cup-01' } });
  await settle(wx);
  await tap(page, '#add');
  await tap(page, '#add');
  assert.deepEqual(wx.storage['stockguard.cart'], [{ skuId: 'mug-02', qty: 1 }, { skuId: 'cup-01', qty: 2 }]);
  assert.deepEqual(wx.toasts, ['已加入购物车', '已加入购物车']);
  assert.deepEqual(wx.navigations, []);
});
