'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, el, text, texts, attr, tap, json, signIn, signedIn, TOKEN } = require('../harness.js');

const cup = { skuId: 'cup-01', name: 'Limited artisan cup', price: 39900, currency: 'CNY', status: 'ON_SALE', available: 3 };
const mug = { skuId: 'mug-02', name: 'Mug', price: 5000, currency: 'CNY', status: 'LOW_STOCK', available: 5, limitPerUser: 2 };
const home = {
  userName: '张三', telNumber: '18912341234', provinceName: '广东省', cityName: '广州市',
  countyName: '海珠区', detailInfo: '新港中路397号', postalCode: '510000',
};
const order = (qty) => ({
  orderId: 'o123456', status: 'PENDING', items: [{ skuId: 'cup-01', qty, unitPrice: 39900 }], amount: 39900 * qty,
  currency: 'CNY', createdAt: '2026-03-01T12:00:00Z', expiresAt: '2026-03-01T12:15:00Z',
});
const skus = { 'GET /skus/cup-01': json(200, cup), 'GET /skus/mug-02': json(200, mug) };

/** storage with a cart of these lines, an address chosen before, and a session. */
function kept(lines, { address = home, session = true } = {}) {
  return { ...(session ? signedIn() : {}), 'stockguard.cart': lines, ...(address ? { 'stockguard.address': address } : {}) };
}

/** Opens the cart tab (onShow) and waits for its SKUs. */
async function cart(routes, options) {
  const wx = fakeWx(routes, options);
  const { page, waits } = openPage('cart', { wx, show: true, random: options && options.random });
  await settle(wx);
  return { page, wx, waits };
}

test('each line with what is left and the per-buyer limit; quantity up to the smaller; total; remove', async () => {
  const { page, wx } = await cart(skus, { storage: kept([{ skuId: 'cup-01', qty: 1 }, { skuId: 'mug-02', qty: 1 }]) });
  assert.deepEqual(texts(page, '.line-item .title'), ['Limited artisan cup', 'Mug']);
  assert.deepEqual(texts(page, '.line-item .note'), ['剩余 3 件', '仅剩 5 件']);
  assert.deepEqual(texts(page, '.line-item .limit'), ['每人限购 2 件']);
  assert.equal(text(page, '#total'), '¥449.00');
  const mugMore = page.querySelectorAll('.more')[1];
  for (let i = 0; i < 4; i++) await tap(page, mugMore);
  assert.deepEqual(texts(page, '.qty'), ['1', '2']); // the limit, not the 5 left
  assert.equal(text(page, '#total'), '¥499.00');
  assert.deepEqual(wx.storage['stockguard.cart'], [{ skuId: 'cup-01', qty: 1 }, { skuId: 'mug-02', qty: 2 }]);
  await tap(page, page.querySelectorAll('.remove')[0]);
  assert.deepEqual(texts(page, '.line-item .title'), ['Mug']);
  assert.equal(text(page, '#total'), '¥100.00');
  assert.deepEqual(wx.storage['stockguard.cart'], [{ skuId: 'mug-02', qty: 2 }]);
  await tap(page, '.remove');
  assert.equal(text(page, '#empty'), '购物车是空的');
  assert.equal(el(page, '#submit'), undefined);
});

test('a line above what is left is shown so and holds the order back until lowered', async () => {
  const { page, wx } = await cart(skus, { storage: kept([{ skuId: 'cup-01', qty: 5 }]) });
  assert.deepEqual(texts(page, '.over'), ['库存不足，最多可买 3 件']);
  assert.equal(attr(page, '#submit', 'disabled'), true);
  await tap(page, '#submit');
  assert.equal(wx.requests.filter((r) => r.method === 'POST').length, 0);
  await tap(page, '.less'); // 5 → 3 at once: the most that may be bought
  assert.deepEqual(texts(page, '.qty'), ['3']);
  assert.deepEqual(texts(page, '.over'), []);
  assert.equal(attr(page, '#submit', 'disabled'), false);
});

test('one order for the whole cart, with the address, then the pay page; the cart is emptied', async () => {
  const { page, wx } = await cart({ ...skus, 'POST /orders': json(201, order(1)) },
    { storage: kept([{ skuId: 'cup-01', qty: 1 }, { skuId: 'mug-02', qty: 2 }]) });
  assert.equal(text(page, '#who'), '张三 18912341234');
  assert.equal(text(page, '#where'), '广东省广州市海珠区新港中路397号');
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.equal(posts.length, 1);
  assert.deepEqual(posts[0].data, {
    items: [{ skuId: 'cup-01', qty: 1 }, { skuId: 'mug-02', qty: 2 }], address: home,
  });
  assert.deepEqual(wx.navigations, [{ how: 'navigateTo', url: '/pages/pay/index?orderId=o123456' }]);
  assert.deepEqual(wx.storage['stockguard.cart'], []);
});

test('no address yet: the order waits for one; wx.chooseAddress\'s fields go with the order as they are', async () => {
  const { page, wx } = await cart({ ...skus, 'POST /orders': json(201, order(1)) },
    { storage: kept([{ skuId: 'cup-01', qty: 1 }], { address: null }), address: [home] });
  assert.equal(text(page, '#choose-address'), '选择收货地址');
  assert.equal(attr(page, '#submit', 'disabled'), true);
  await tap(page, '#choose-address');
  await settle(wx);
  assert.equal(wx.addressAsks, 1);
  assert.equal(text(page, '#who'), '张三 18912341234');
  const picked = { ...home, nationalCode: '156', errMsg: 'chooseAddress:ok' }; // the picker's whole answer: the API takes it
  assert.deepEqual(wx.storage['stockguard.address'], picked);
  await tap(page, '#submit');
  await settle(wx);
  assert.deepEqual(wx.requests.filter((r) => r.method === 'POST')[0].data.address, picked);
});

test('the address permission refused: the buyer is told and sent to the settings; given there, the picker opens again', async () => {
  const { page, wx } = await cart(skus, {
    storage: kept([{ skuId: 'cup-01', qty: 1 }], { address: null }), address: ['deny', home], settings: { 'scope.address': true },
  });
  await tap(page, '#choose-address');
  await settle(wx);
  assert.deepEqual(wx.modals.map((m) => m.title), ['需要收货地址权限']);
  assert.equal(wx.settingsOpened, 1);
  assert.equal(wx.addressAsks, 2);
  assert.equal(text(page, '#who'), '张三 18912341234');
  assert.equal(text(page, '#error'), '');
});

test('the permission refused and not given in the settings (or the guidance declined): no address, no error, no order', async () => {
  const { page, wx } = await cart(skus, {
    storage: kept([{ skuId: 'cup-01', qty: 1 }], { address: null }), address: ['deny'], settings: { 'scope.address': false },
  });
  await tap(page, '#choose-address');
  await settle(wx);
  assert.equal(wx.settingsOpened, 1);
  assert.equal(wx.addressAsks, 1);
  assert.equal(text(page, '#choose-address'), '选择收货地址');
  wx.showModal = () => Promise.resolve({ confirm: false, cancel: true });
  await tap(page, '#choose-address');
  await settle(wx);
  assert.equal(wx.settingsOpened, 1); // declined: the settings stay closed
  assert.equal(attr(page, '#submit', 'disabled'), true);
  assert.equal(wx.requests.filter((r) => r.method === 'POST').length, 0);
});

test('goods that do not ship (delivery "none") need no address and send none', async () => {
  const code = { skuId: 'code-01', name: 'Gift code', price: 1000, currency: 'CNY', status: 'ON_SALE', available: 9, delivery: 'none' };
  const { page, wx } = await cart({ 'GET /skus/code-01': json(200, code), 'POST /orders': json(201, order(1)) },
    { storage: kept([{ skuId: 'code-01', qty: 1 }], { address: null }) });
  assert.equal(el(page, '.address'), undefined);
  await tap(page, '#submit');
  await settle(wx);
  assert.deepEqual(wx.requests.filter((r) => r.method === 'POST')[0].data, { items: [{ skuId: 'code-01', qty: 1 }] });
});

test('a busy API: the order is sent again after Retry-After with jitter, every send with the same Idempotency-Key', async () => {
  let sends = 0;
  const { page, wx, waits } = await cart({
    ...skus,
    'POST /orders': () => (++sends < 3
      ? { status: 503, body: { code: 'BUSY', message: 'busy' }, header: { 'Retry-After': '1' } }
      : { status: 201, body: order(1) }),
  }, { storage: kept([{ skuId: 'cup-01', qty: 1 }]), random: () => 0.5 });
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.equal(posts.length, 3);
  assert.equal(new Set(posts.map((r) => r.header['Idempotency-Key'])).size, 1);
  assert.equal(posts[0].header.Authorization, `Bearer ${TOKEN}`);
  assert.deepEqual(waits, [1250, 1250]); // 1 s + half of 1 s × random 0.5
  assert.deepEqual(wx.navigations, [{ how: 'navigateTo', url: '/pages/pay/index?orderId=o123456' }]);
});

test('the API stays busy: three sends, then a clear message; a tap again is the same order (same key)', async () => {
  const { page, wx, waits } = await cart({
    ...skus, 'POST /orders': json(429, { code: 'RATE_LIMITED', message: 'slow down' }, { 'Retry-After': '2' }),
  }, { storage: kept([{ skuId: 'cup-01', qty: 1 }]) });
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(text(page, '#error'), '当前人数较多，请2 秒后再试。');
  assert.equal(waits.length, 2);
  assert.ok(waits.every((ms) => ms >= 2000 && ms <= 3000));
  await tap(page, '#submit');
  await settle(wx);
  const keys = wx.requests.filter((r) => r.method === 'POST').map((r) => r.header['Idempotency-Key']);
  assert.equal(keys.length, 6);
  assert.equal(new Set(keys).size, 1);
  assert.deepEqual(wx.storage['stockguard.cart'], [{ skuId: 'cup-01', qty: 1 }]); // kept until an order is placed
});

test('no network, then STOCK_OUT naming the line: the tap after the lost send keeps the key, the one after the refusal gets a new one', async () => {
  let n = 0;
  const { page, wx } = await cart({
    ...skus,
    'POST /orders': () => {
      n++;
      if (n === 1) throw { errMsg: 'request:fail timeout' };
      if (n === 2) return { status: 409, body: { code: 'STOCK_OUT', message: 'stock out', skuId: 'cup-01' } };
      return { status: 201, body: order(1) };
    },
  }, { storage: kept([{ skuId: 'cup-01', qty: 1 }]) });
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(text(page, '#error'), '无法连接到商城，请检查网络后重试。');
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(text(page, '#error'), 'Limited artisan cup：库存不足，无法购买这么多。');
  await tap(page, '#submit');
  await settle(wx);
  const keys = wx.requests.filter((r) => r.method === 'POST').map((r) => r.header['Idempotency-Key']);
  assert.equal(keys.length, 3);
  assert.equal(keys[0], keys[1]);
  assert.notEqual(keys[1], keys[2]);
  assert.equal(wx.requests.filter((r) => r.path === '/skus/cup-01').length, 2); // read again after STOCK_OUT
});

test('a changed cart is a new order: a new key', async () => {
  const { page, wx } = await cart({
    ...skus, 'POST /orders': () => { throw { errMsg: 'request:fail timeout' }; },
  }, { storage: kept([{ skuId: 'cup-01', qty: 1 }]) });
  await tap(page, '#submit');
  await settle(wx);
  await tap(page, '.more');
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.deepEqual(posts.map((r) => r.data.items[0].qty), [1, 2]);
  assert.notEqual(posts[0].header['Idempotency-Key'], posts[1].header['Idempotency-Key']);
});

test('not signed in yet: one silent wx.login, the token kept in storage, then the order', async () => {
  const { page, wx } = await cart({
    ...skus,
    'POST /auth/wechat': signIn,
    'POST /orders': (req) => (req.header.Authorization === `Bearer ${TOKEN}`
      ? { status: 201, body: order(1) } : { status: 401, body: { message: 'Unauthorized' } }),
  }, { storage: kept([{ skuId: 'cup-01', qty: 1 }], { session: false }) });
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(wx.logins, 1);
  assert.deepEqual(wx.requests.map((r) => `${r.method} ${r.path}`), ['GET /skus/cup-01', 'POST /auth/wechat', 'POST /orders']);
  assert.equal(wx.storage['stockguard.session'].token, TOKEN);
  assert.equal(wx.navigations.length, 1);
});

test('a SKU that sold out meanwhile: shown so, and "提交订单" is greyed', async () => {
  const { page, wx } = await cart({ 'GET /skus/cup-01': json(200, { ...cup, status: 'SOLD_OUT', available: 0 }) },
    { storage: kept([{ skuId: 'cup-01', qty: 1 }]) });
  assert.deepEqual(texts(page, '.over'), ['暂不可购买']);
  assert.equal(attr(page, '#submit', 'disabled'), true);
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(wx.requests.length, 1);
});

test('the tap asks for the subscribe messages first and sends the accepted template ids with the order', async () => {
  const { page, wx } = await cart({ ...skus, 'POST /orders': json(201, order(1)) },
    { storage: kept([{ skuId: 'cup-01', qty: 1 }]), subscribe: { 'local-pay-reminder': 'accept', 'local-refund-done': 'reject', 'local-aftersale': 'accept' } });
  assert.deepEqual(wx.subscribeAsks, []); // nothing asked before the tap
  await tap(page, '#submit');
  await settle(wx);
  assert.deepEqual(wx.subscribeAsks, [['local-pay-reminder', 'local-refund-done', 'local-aftersale']]);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.deepEqual(posts[0].data, { items: [{ skuId: 'cup-01', qty: 1 }], subscriptions: ['local-pay-reminder', 'local-aftersale'], address: home });
});

test('a failed subscribe dialog never stops the order: it goes without subscriptions', async () => {
  const { page, wx } = await cart({ ...skus, 'POST /orders': json(201, order(1)) },
    { storage: kept([{ skuId: 'cup-01', qty: 1 }]), subscribe: { fail: true } });
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.deepEqual(posts.map((r) => r.data), [{ items: [{ skuId: 'cup-01', qty: 1 }], address: home }]);
  assert.equal(wx.navigations.length, 1);
});
