// api.js on a wx whose request answers from a route table: sign-in, the one silent
// sign-in and one more send on 401, and Retry-After with jitter.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, json, signIn, TOKEN } = require('./fakewx.js');
const { createApi, ApiError } = require('../api.js');

const KEY = 'stockguard.session';
const calls = (wx) => wx.requests.map((r) => `${r.method} ${r.path} ${r.header.Authorization || '-'}`);
/** GET /orders/o1 answers 200 to TOKEN, else 401 as the JWT authorizer does. */
const orderRoute = (req) => (req.header.Authorization === `Bearer ${TOKEN}`
  ? { status: 200, body: { orderId: 'o1' } } : { status: 401, body: { message: 'Unauthorized' } });

function api(wx, over = {}) {
  const waits = [];
  return { waits, api: createApi({ baseURL: 'https://api.example.test', wx, sleep: async (ms) => { waits.push(ms); }, ...over }) };
}

test('the token kept in storage is read back at start and sent; no sign-in', async () => {
  const wx = fakeWx({ 'GET /orders/o1': orderRoute }, { storage: { [KEY]: { token: TOKEN, expiresAt: Date.now() + 3_600_000 } } });
  const { api: a } = api(wx);
  assert.equal(a.loggedIn(), true);
  await a.getOrder('o1');
  assert.deepEqual(calls(wx), [`GET /orders/o1 Bearer ${TOKEN}`]);
  assert.equal(wx.logins, 0);
});

test('login keeps the token and when it expires (expiresIn) with wx.setStorageSync', async () => {
  const wx = fakeWx({ 'POST /auth/wechat': signIn });
  const before = Date.now();
  const { api: a } = api(wx);
  assert.equal(a.loggedIn(), false);
  assert.deepEqual(await a.login(), { token: TOKEN, expiresIn: 7200 });
  const kept = wx.storage[KEY];
  assert.equal(kept.token, TOKEN);
  assert.ok(kept.expiresAt >= before + 7_200_000 && kept.expiresAt <= Date.now() + 7_200_000);
  assert.equal(createApi({ baseURL: 'x', wx }).loggedIn(), true); // the next app start
});

test('a token known to be expired: signs in before the call, the expired token never sent', async () => {
  const wx = fakeWx({ 'POST /auth/wechat': signIn, 'GET /orders/o1': orderRoute },
    { storage: { [KEY]: { token: 'old', expiresAt: Date.now() - 1000 } } });
  const { api: a } = api(wx);
  await a.getOrder('o1');
  assert.deepEqual(calls(wx), ['POST /auth/wechat -', `GET /orders/o1 Bearer ${TOKEN}`]);
  assert.equal(wx.logins, 1);
});

test('401: one silent sign-in, one more send', async () => {
  const wx = fakeWx({ 'POST /auth/wechat': signIn, 'GET /orders/o1': orderRoute },
    { storage: { [KEY]: { token: 'garbage', expiresAt: Date.now() + 3_600_000 } } });
  const { api: a } = api(wx);
  assert.deepEqual(await a.getOrder('o1'), { orderId: 'o1' });
  assert.deepEqual(calls(wx), ['GET /orders/o1 Bearer garbage', 'POST /auth/wechat -', `GET /orders/o1 Bearer ${TOKEN}`]);
  assert.equal(wx.storage[KEY].token, TOKEN);
});

test('a second 401 after signing in again is the answer: no loop', async () => {
  const wx = fakeWx({ 'POST /auth/wechat': signIn, 'GET /orders/o1': json(401, { message: 'Unauthorized' }) },
    { storage: { [KEY]: { token: 'garbage', expiresAt: Date.now() + 3_600_000 } } });
  const { api: a } = api(wx);
  await assert.rejects(a.getOrder('o1'), (err) => err instanceof ApiError && err.statusCode === 401);
  assert.deepEqual(calls(wx), ['GET /orders/o1 Bearer garbage', 'POST /auth/wechat -', `GET /orders/o1 Bearer ${TOKEN}`]);
  assert.equal(wx.logins, 1);
});

test('signed in for this very call and still 401: no second sign-in', async () => {
  const wx = fakeWx({ 'POST /auth/wechat': signIn, 'GET /orders/o1': json(401, { message: 'Unauthorized' }) });
  const { api: a } = api(wx);
  await assert.rejects(a.getOrder('o1'), { statusCode: 401 });
  assert.deepEqual(calls(wx), ['POST /auth/wechat -', `GET /orders/o1 Bearer ${TOKEN}`]);
  assert.equal(wx.logins, 1);
});

test('the sign-in itself refused (401 on /auth/wechat): rejected once, no loop', async () => {
  const wx = fakeWx({ 'POST /auth/wechat': json(401, { code: 'UNAUTHORIZED', message: 'bad code' }), 'GET /orders/o1': orderRoute },
    { storage: { [KEY]: { token: 'garbage', expiresAt: Date.now() + 3_600_000 } } });
  const { api: a } = api(wx);
  await assert.rejects(a.getOrder('o1'), { statusCode: 401, code: 'UNAUTHORIZED' });
  assert.deepEqual(calls(wx), ['GET /orders/o1 Bearer garbage', 'POST /auth/wechat -']);
  assert.equal(wx.storage[KEY], undefined); // the refused token is forgotten
});

test('calls refused at once share one sign-in', async () => {
  const wx = fakeWx({ 'POST /auth/wechat': signIn, 'GET /orders/o1': orderRoute },
    { storage: { [KEY]: { token: 'garbage', expiresAt: Date.now() + 3_600_000 } } });
  const { api: a } = api(wx);
  await Promise.all([a.getOrder('o1'), a.getOrder('o1'), a.getOrder('o1')]);
  assert.equal(wx.logins, 1);
  assert.equal(wx.requests.filter((r) => r.path === '/auth/wechat').length, 1);
  assert.equal(wx.requests.filter((r) => r.header.Authorization === `Bearer ${TOKEN}`).length, 3);
});

test('429/503: waits Retry-After plus up to half of it at random, at most 3 sends', async () => {
  for (const [random, want] of [[0, 2000], [0.999, 2999]]) {
    let n = 0;
    const wx = fakeWx({ 'GET /skus/a': () => (++n === 1 ? { status: 429, body: { code: 'RATE_LIMITED', message: 'x' }, header: { 'retry-after': '2' } } : { status: 200, body: { skuId: 'a' } }) });
    const { api: a, waits } = api(wx, { random: () => random });
    await a.getSku('a');
    assert.deepEqual(waits, [want]);
  }
  const wx = fakeWx({ 'GET /skus/a': json(503, { code: 'BUSY', message: 'x' }) }); // no Retry-After: 1 s
  const { api: a, waits } = api(wx, { random: () => 0 });
  await assert.rejects(a.getSku('a'), { statusCode: 503, code: 'BUSY', retryAfter: 0 });
  assert.deepEqual(waits, [1000, 1000]);
  assert.equal(wx.requests.length, 3);
});

test('a Retry-After longer than maxWaitSeconds is not waited for; other errors are not sent again', async () => {
  const wx = fakeWx({
    'GET /skus/a': json(503, { code: 'BUSY', message: 'x' }, { 'Retry-After': '11' }),
    'GET /skus/b': json(500, { code: 'INTERNAL', message: 'x' }),
  });
  const { api: a, waits } = api(wx);
  await assert.rejects(a.getSku('a'), { retryAfter: 11 });
  await assert.rejects(a.getSku('b'), { statusCode: 500 });
  assert.deepEqual(waits, []);
  assert.equal(wx.requests.length, 2);
});

test('a Retry-After given as an HTTP date', async () => {
  const at = new Date(Date.now() + 5000).toUTCString();
  const wx = fakeWx({ 'GET /skus/a': json(503, { code: 'BUSY', message: 'x' }, { 'Retry-After': at }) });
  const { api: a } = api(wx, { retry: { tries: 1 } });
  await assert.rejects(a.getSku('a'), (err) => err.retryAfter >= 4 && err.retryAfter <= 5);
});

test('paging: after= is sent escaped, absent for the first page', async () => {
  const wx = fakeWx({ 'GET /skus': json(200, { skus: [] }), 'GET /orders': json(200, { orders: [] }) },
    { storage: { [KEY]: { token: TOKEN, expiresAt: Date.now() + 3_600_000 } } });
  const { api: a } = api(wx);
  await a.listSkus();
  await a.listSkus('a b/c');
  await a.listOrders('x=1');
  assert.deepEqual(wx.requests.map((r) => r.query), [{}, { after: 'a b/c' }, { after: 'x=1' }]);
  assert.equal(wx.requests[0].header.Authorization, undefined);
  assert.equal(wx.requests[2].header.Authorization, `Bearer ${TOKEN}`);
});

test('wx.request sends none of PATCH (its method list, WX_REQUEST_METHODS): the fake fails it, and changeAddress sends PUT', async () => {
  const patched = { status: 200, body: { orderId: 'o1' } };
  const wx = fakeWx({ 'PATCH /orders/o1/address': () => patched, 'PUT /orders/o1/address': () => patched },
    { storage: { [KEY]: { token: TOKEN, expiresAt: Date.now() + 3_600_000 } } });
  const failed = await new Promise((resolve) => wx.request({ url: 'https://api.example.test/orders/o1/address', method: 'PATCH', success: () => resolve(''), fail: (e) => resolve(e.errMsg) }));
  assert.match(failed, /^request:fail/);
  const { api: a } = api(wx);
  assert.deepEqual(await a.changeAddress('o1', { userName: '张三', telNumber: '18912341234', provinceName: '广东省', cityName: '广州市', countyName: '', detailInfo: 'x' }), { orderId: 'o1' });
  assert.deepEqual(calls(wx), ['PATCH /orders/o1/address -', `PUT /orders/o1/address Bearer ${TOKEN}`]);
});

test('the public SKU pages are read at pageURL (CloudFront), every other call at baseURL', async () => {
  const wx = fakeWx({
    'GET /skus': json(200, { skus: [] }), 'GET /skus/a': json(200, { skuId: 'a' }),
    'POST /auth/wechat': signIn, 'GET /orders/o1': orderRoute,
  });
  const { api: a } = api(wx, { pageURL: 'https://page.example.test' });
  await a.listSkus();
  await a.getSku('a');
  await a.getOrder('o1');
  assert.deepEqual(wx.requests.map((r) => `${r.host} ${r.method} ${r.path}`), [
    'page.example.test GET /skus', 'page.example.test GET /skus/a',
    'api.example.test POST /auth/wechat', 'api.example.test GET /orders/o1',
  ]);
  const { api: plain } = api(wx);
  await plain.getSku('a');
  assert.equal(wx.requests.at(-1).host, 'api.example.test', 'without pageURL the page is read at baseURL');
});
