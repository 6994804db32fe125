'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, el, text, texts, tap, json } = require('../harness.js');

const sku = (skuId, over) => ({ skuId, name: `Item ${skuId}`, price: 12900, currency: 'CNY', status: 'ON_SALE', available: 7, ...over });

// Three SKUs in pages of two, as GET /skus?after= answers them: { skus, next }.
function catalogue() {
  return {
    'GET /skus': (req) => (req.query.after === 'c2'
      ? { status: 200, body: { skus: [sku('c'), sku('d', { status: 'SOLD_OUT', available: 0 })] } }
      : { status: 200, body: { skus: [sku('a'), sku('b', { status: 'LOW_STOCK', available: 1 })], next: 'c2' } }),
  };
}

test('the first page, then the next one by its cursor, then the end; public: no sign-in', async () => {
  const wx = fakeWx(catalogue());
  const { page } = openPage('skus', { wx });
  await settle(wx);
  assert.deepEqual(texts(page, '.sku .title'), ['Item a', 'Item b']);
  assert.deepEqual(texts(page, '.sku .note'), ['剩余 7 件', '仅剩 1 件']);
  assert.equal(text(page, '#end'), '');
  await tap(page, '#more');
  await settle(wx);
  assert.deepEqual(wx.requests.map((r) => r.query.after), [undefined, 'c2']);
  assert.deepEqual(texts(page, '.sku .title'), ['Item a', 'Item b', 'Item c', 'Item d']);
  assert.equal(el(page, '#more'), undefined);
  assert.equal(text(page, '#end'), '没有更多了');
  page.instance.onReachBottom(); // past the end: nothing more is asked for
  await settle(wx);
  assert.equal(wx.requests.length, 2);
  assert.equal(wx.logins, 0);
  assert.ok(wx.requests.every((r) => r.header.Authorization === undefined));
});

test('a sold-out SKU is greyed in the list; a tap on a row opens that product', async () => {
  const wx = fakeWx(catalogue());
  const { page } = openPage('skus', { wx });
  await settle(wx);
  page.instance.onReachBottom();
  await settle(wx);
  const notes = page.querySelectorAll('.sku .note');
  assert.equal(notes[3].dom.textContent, '已售罄');
  assert.ok(notes[3].dom.classList.contains('main--muted'));
  assert.ok(!notes[0].dom.classList.contains('main--muted'));
  await tap(page, page.querySelectorAll('.sku')[1]);
  assert.deepEqual(wx.navigations, [{ how: 'navigateTo', url: '/pages/sku/index?skuId=b' }]);
});

test('pull-down loads the first page again instead of appending it, and ends the spinner', async () => {
  const wx = fakeWx(catalogue());
  const { page } = openPage('skus', { wx });
  await settle(wx);
  page.instance.onReachBottom();
  await settle(wx);
  page.instance.onPullDownRefresh();
  await settle(wx);
  assert.deepEqual(texts(page, '.sku .title'), ['Item a', 'Item b']);
  assert.equal(wx.requests.at(-1).query.after, undefined);
  assert.equal(wx.pullDownStopped, 1);
  assert.ok(el(page, '#more'));
});

test('a busy API with a Retry-After longer than the page waits: one try, a clear message', async () => {
  const wx = fakeWx({ 'GET /skus': json(503, { code: 'BUSY', message: 'busy' }, { 'Retry-After': '30' }) });
  const { page, waits } = openPage('skus', { wx });
  await settle(wx);
  assert.equal(text(page, '#error'), '当前人数较多，请30 秒后再试。');
  assert.equal(wx.requests.length, 1);
  assert.deepEqual(waits, []);
});

test('an empty shop says so', async () => {
  const wx = fakeWx({ 'GET /skus': json(200, { skus: [] }) });
  const { page } = openPage('skus', { wx });
  await settle(wx);
  assert.equal(text(page, '#empty'), '暂无在售商品');
  assert.equal(el(page, '#more'), undefined);
});
