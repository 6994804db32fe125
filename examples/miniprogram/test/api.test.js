// Tests api.js against the local stack (go run ./cmd/local, built and started here on
// free ports, stopped at the end) through a small wx shim: wx.request over fetch,
// wx.login answering the jscode2session stand-in's test codes, wx.requestPayment paying
// at the WeChat Pay stand-in (POST /_local/pay/{orderId}, which sends the real signed
// notification), and storage in memory. Run from the repository root:
// node --test examples/miniprogram/test/
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const crypto = require('node:crypto');
const { createApi, ApiError, WX_REQUEST_METHODS } = require('../api.js');
const { msUntil } = require('../view.js');

const SESSION = 'stockguard.session'; // api.js's storage key
/** A delivery address as wx.chooseAddress answers it (the seed's SKUs ship by express). */
const HOME = {
  userName: '张三', telNumber: '18912341234', provinceName: '广东省', cityName: '广州市',
  countyName: '海珠区', detailInfo: '新港中路397号', postalCode: '510000',
};

const root = path.resolve(__dirname, '..', '..', '..');
const paymentTimeoutSeconds = 4;
let stack;
let baseURL;
let dir;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockguard-miniprogram-'));
  const bin = path.join(dir, 'local');
  execFileSync('go', ['build', '-o', bin, './cmd/local'], { cwd: root, stdio: 'inherit' });
  stack = spawn(bin, [
    '-seed', 'examples/seed.json', '-payment-timeout', `${paymentTimeoutSeconds}s`,
    '-addr', '127.0.0.1:0', '-dynamodb-addr', '127.0.0.1:0', '-sqs-addr', '127.0.0.1:0',
    '-wechatpay-addr', '127.0.0.1:0', '-wxlogin-addr', '127.0.0.1:0', '-wxapi-addr', '127.0.0.1:0', '-log-format', 'json',
  ], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  baseURL = await new Promise((resolve, reject) => {
    stack.on('exit', (code) => reject(new Error(`local stack exited with ${code}`)));
    readline.createInterface({ input: stack.stdout }).on('line', (line) => {
      try {
        const rec = JSON.parse(line);
        if (rec.msg === 'ready') resolve(rec.api);
      } catch { /* not a JSON line */ }
    });
  });
}, { timeout: 600_000 }); // the build and a stack that never says ready fail the run instead of hanging it (a build beside the whole suite can take minutes)

after(async () => {
  if (stack && stack.exitCode === null) {
    const exited = new Promise((r) => stack.once('exit', r));
    stack.kill('SIGTERM');
    await exited;
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

// shim is the part of wx the API module uses, for the buyer name: wx.login gives the
// stand-in's code test-<name> (accepted once per stack run). It records the requests
// ("METHOD /path status"), the headers sent (sent) and answered (answers), and counts
// the wx.login calls.
function shim(name, storage = {}) {
  const prepaid = new Map(); // package → order id, as WeChat knows an order by its prepay_id
  const wx = { requests: [], sent: [], answers: [], logins: 0, storage };
  async function request({ url, method = 'GET', data, header = {}, success, fail }) {
    if (!WX_REQUEST_METHODS.includes(method)) return fail({ errMsg: `request:fail invalid method ${method}` }); // as wx.request's page allows
    try {
      wx.sent.push({ method, path: new URL(url).pathname, header: { ...header } });
      const res = await fetch(url, { method, headers: header, body: data === undefined ? undefined : JSON.stringify(data) });
      wx.answers.push(Object.fromEntries(res.headers));
      const text = await res.text();
      let body = text;
      try { body = JSON.parse(text); } catch { /* not JSON */ }
      const m = /\/orders\/([^/]+)\/pay$/.exec(new URL(url).pathname);
      if (m && res.status === 200) prepaid.set(body.package, decodeURIComponent(m[1]));
      wx.requests.push(`${method} ${new URL(url).pathname} ${res.status}`);
      success({ statusCode: res.status, data: body, header: Object.fromEntries(res.headers) });
    } catch (err) {
      fail({ errMsg: `request:fail ${err.message}` });
    }
  }
  return Object.assign(wx, {
    request,
    login({ success }) {
      wx.logins++;
      success({ code: `test-${name}`, errMsg: 'login:ok' });
    },
    getStorageSync(key) {
      return key in storage ? storage[key] : '';
    },
    setStorageSync(key, value) {
      storage[key] = value;
    },
    removeStorageSync(key) {
      delete storage[key];
    },
    async requestPayment({ package: pkg, paySign, success, fail }) {
      const orderId = prepaid.get(pkg);
      if (!orderId || !paySign) return fail({ errMsg: 'requestPayment:fail unknown prepay_id' });
      const res = await fetch(`${baseURL}/_local/pay/${encodeURIComponent(orderId)}`, { method: 'POST' });
      if (res.status === 204) return success({ errMsg: 'requestPayment:ok' });
      fail({ errMsg: `requestPayment:fail ${res.status}` });
    },
  });
}

// foreignToken is a well-formed RS256 JWT for the buyer that a key the stack does not
// know signed: what storage holds after the stack restarted with a new key.
function foreignToken(sub) {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg: 'RS256', typ: 'JWT', kid: 'old' })}.${b64({ iss: baseURL, sub, aud: 'wx0000000000000001', iat: now, exp: now + 7200 })}`;
  const sig = crypto.sign('sha256', Buffer.from(input), privateKey);
  return `${input}.${sig.toString('base64url')}`;
}

// walk follows `next` from the first page to the last and returns every item of key.
async function walk(list, key) {
  const items = [];
  let after = '';
  for (let pages = 0; pages < 100; pages++) {
    const page = await list(after);
    items.push(...page[key]);
    if (!page.next) return items;
    after = page.next;
  }
  throw new Error('more than 100 pages');
}

// admin sends a merchant API request to the local stack (from its own machine: no
// signature; the operator is local-operator).
async function admin(method, path, body) {
  const res = await fetch(`${baseURL}${path}`, { method, body: JSON.stringify(body) });
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${await res.text()}`);
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

test('listSkus walks every page: the seeded SKUs once each, as getSku answers them, no sign-in, cacheable 1 s', async () => {
  const wx = shim('lena');
  const api = createApi({ baseURL, wx });
  const skus = await walk((after) => api.listSkus(after), 'skus');
  for (const id of ['cup-01', 'saucer-02', 'teapot-03']) {
    const listed = skus.filter((s) => s.skuId === id);
    assert.equal(listed.length, 1, `${id} listed ${listed.length} times`);
    assert.deepEqual(listed[0], await api.getSku(id));
  }
  assert.equal(wx.logins, 0);
  for (const { method, path, header } of wx.sent) {
    assert.ok(!Object.keys(header).some((h) => h.toLowerCase() === 'authorization'), `${method} ${path} sent Authorization`);
  }
  assert.ok(wx.answers.length > 0);
  for (const header of wx.answers) assert.equal(header['cache-control'], 'public, max-age=1');
});

test('listSkus leaves out a SKU put off sale and lists an upcoming one with its saleStartsAt', async () => {
  const startsAt = new Date(Date.now() + 3_600_000).toISOString();
  await admin('POST', '/admin/skus', { skuId: 'lamp-04', name: 'Lamp', price: 5900, stock: 5, saleStartsAt: startsAt });
  await admin('POST', '/admin/skus', { skuId: 'vase-05', name: 'Vase', price: 7900, stock: 5 });
  const api = createApi({ baseURL, wx: shim('lena2') });
  await pause(1100); // a list page is at most 1 s old
  let skus = await walk((after) => api.listSkus(after), 'skus');
  assert.ok(skus.some((s) => s.skuId === 'vase-05'), 'vase-05 on sale is listed');
  await admin('PATCH', '/admin/skus/vase-05', { onSale: false });
  await pause(1100);
  skus = await walk((after) => api.listSkus(after), 'skus');
  assert.ok(!skus.some((s) => s.skuId === 'vase-05'), 'vase-05 off sale is not listed');
  const lamp = skus.find((s) => s.skuId === 'lamp-04');
  assert.ok(lamp, 'lamp-04 upcoming is listed');
  assert.equal(lamp.status, 'UPCOMING');
  assert.equal(Date.parse(lamp.saleStartsAt), Date.parse(startsAt));
});

test('login → order → pay → PAID', async () => {
  const api = createApi({ baseURL, wx: shim('alice') });
  const { token, expiresIn } = await api.login();
  assert.ok(token.split('.').length === 3);
  assert.equal(expiresIn, 7200);
  const sku = await api.getSku('cup-01');
  assert.ok(sku.available > 0, 'the seed has cups');
  const order = await api.createOrder([{ skuId: 'cup-01', qty: 1 }], 'tap-1', [], HOME);
  assert.equal(order.status, 'PENDING');
  assert.ok(msUntil(order.expiresAt, Date.now()) <= paymentTimeoutSeconds * 1000);
  const params = await api.pay(order.orderId);
  assert.match(params.package, /^prepay_id=/);
  assert.equal(params.signType, 'RSA');
  const paid = await api.waitForStatus(order.orderId, ['PAID']);
  assert.equal(paid.status, 'PAID');
  assert.ok(paid.transactionId);
  await pause(1100); // the SKU's answer is at most 1 s old
  const after = await api.getSku('cup-01');
  assert.equal(after.available, sku.available - 1);
});

test('the accepted subscribe templates go with the order; a template the shop does not send is refused, nothing reserved', async () => {
  const api = createApi({ baseURL, wx: shim('frank') });
  await api.login();
  const before = await api.getSku('saucer-02');
  const order = await api.createOrder([{ skuId: 'saucer-02', qty: 1 }], 'tap-frank', ['local-pay-reminder', 'local-refund-done'], HOME);
  assert.equal(order.status, 'PENDING');
  await assert.rejects(api.createOrder([{ skuId: 'saucer-02', qty: 1 }], 'tap-frank-2', ['someone-elses'], HOME), (err) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 400);
    assert.equal(err.code, 'INVALID_REQUEST');
    return true;
  });
  await pause(1100); // the SKU's answer is at most 1 s old
  assert.equal((await api.getSku('saucer-02')).available, before.available - 1);
});

test('order → let it expire → the pay call is refused', async () => {
  const api = createApi({ baseURL, wx: shim('bob') });
  await api.login();
  const order = await api.createOrder([{ skuId: 'cup-01', qty: 1 }], undefined, [], HOME);
  await new Promise((r) => setTimeout(r, msUntil(order.expiresAt, Date.now()) + 1000));
  await assert.rejects(api.pay(order.orderId), (err) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 409);
    assert.equal(err.code, 'ORDER_NOT_PAYABLE');
    return true;
  });
});

test('cancel closes the order, then paying is refused', async () => {
  const api = createApi({ baseURL, wx: shim('carol') });
  await api.login();
  const fresh = await api.createOrder([{ skuId: 'cup-01', qty: 1 }], undefined, [], HOME);
  const cancelled = await api.cancel(fresh.orderId);
  assert.equal(cancelled.status, 'CANCELLED');
  assert.equal(cancelled.cancelReason, 'USER');
  await assert.rejects(api.pay(fresh.orderId), { code: 'ORDER_NOT_PAYABLE' });
});

test('no token yet: the first order signs in silently and keeps the token in storage', async () => {
  const wx = shim('dave');
  const api = createApi({ baseURL, wx });
  const order = await api.createOrder([{ skuId: 'cup-01', qty: 1 }], undefined, [], HOME);
  assert.equal(order.status, 'PENDING');
  assert.equal(wx.logins, 1);
  assert.deepEqual(wx.requests, ['POST /auth/wechat 200', 'POST /orders 201']);
  assert.equal(wx.storage[SESSION].token.split('.').length, 3);
  // The next start of the app reads it back: no sign-in.
  const again = shim('dave', wx.storage);
  const read = await createApi({ baseURL, wx: again }).getOrder(order.orderId);
  assert.equal(read.orderId, order.orderId);
  assert.equal(again.logins, 0);
});

test('a kept token the stack refuses (signed by another key): 401 → one silent wx.login → the call again', async () => {
  const stale = foreignToken('o-erin');
  const wx = shim('erin', { [SESSION]: { token: stale, expiresAt: Date.now() + 3_600_000 } });
  const api = createApi({ baseURL, wx });
  const order = await api.createOrder([{ skuId: 'cup-01', qty: 1 }], 'tap-erin', [], HOME);
  assert.equal(order.status, 'PENDING');
  assert.equal(wx.logins, 1);
  assert.deepEqual(wx.requests, ['POST /orders 401', 'POST /auth/wechat 200', 'POST /orders 201']);
  assert.notEqual(wx.storage[SESSION].token, stale);
  const read = await api.getOrder(order.orderId); // the new token goes on working
  assert.equal(read.orderId, order.orderId);
  assert.equal(wx.logins, 1);
});

test('a kept token known to be expired (its expiresIn is past): signs in first, never sends it', async () => {
  const wx = shim('fay', { [SESSION]: { token: 'expired-token', expiresAt: Date.now() - 1000 } });
  const api = createApi({ baseURL, wx });
  await api.createOrder([{ skuId: 'cup-01', qty: 1 }], undefined, [], HOME);
  assert.deepEqual(wx.requests, ['POST /auth/wechat 200', 'POST /orders 201']);
  assert.equal(wx.logins, 1);
});

test('a 401 whose sign-in is refused too (a used code) ends there: no loop', async () => {
  const first = shim('gus');
  await createApi({ baseURL, wx: first }).login(); // uses the code test-gus
  const wx = shim('gus', { [SESSION]: { token: 'garbage', expiresAt: Date.now() + 3_600_000 } });
  const api = createApi({ baseURL, wx });
  await assert.rejects(api.createOrder([{ skuId: 'cup-01', qty: 1 }], undefined, [], HOME), (err) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 401);
    return true;
  });
  assert.equal(wx.logins, 1);
  assert.deepEqual(wx.requests, ['POST /orders 401', 'POST /auth/wechat 401']);
  assert.equal(wx.storage[SESSION], undefined);
});

test('listOrders is the buyer\'s own, newest first, a page at a time', async () => {
  const hank = createApi({ baseURL, wx: shim('hank') });
  const placed = [];
  for (let i = 0; i < 21; i++) placed.push((await hank.createOrder([{ skuId: 'saucer-02', qty: 1 }], undefined, [], HOME)).orderId);
  const other = await createApi({ baseURL, wx: shim('iris') }).createOrder([{ skuId: 'saucer-02', qty: 1 }], undefined, [], HOME);
  const pages = [];
  let after = '';
  for (;;) {
    const page = await hank.listOrders(after);
    pages.push(page);
    if (!page.next) break;
    after = page.next;
  }
  assert.ok(pages.length >= 2, 'more orders than one page holds');
  const ids = pages.flatMap((p) => p.orders.map((o) => o.orderId));
  assert.deepEqual(ids, [...placed].reverse());
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(!ids.includes(other.orderId));
  assert.equal(pages[pages.length - 1].next, undefined);
});

test('listOrders shows a cancelled order CANCELLED and a paid one PAID', async () => {
  const api = createApi({ baseURL, wx: shim('jack') });
  const cancelled = await api.createOrder([{ skuId: 'saucer-02', qty: 1 }], undefined, [], HOME);
  await api.cancel(cancelled.orderId);
  const paid = await api.createOrder([{ skuId: 'saucer-02', qty: 1 }], undefined, [], HOME);
  await api.pay(paid.orderId);
  await api.waitForStatus(paid.orderId, ['PAID']);
  const orders = await walk((after) => api.listOrders(after), 'orders');
  const status = Object.fromEntries(orders.map((o) => [o.orderId, o.status]));
  assert.deepEqual(status, { [cancelled.orderId]: 'CANCELLED', [paid.orderId]: 'PAID' });
});

test('listOrders with a kept token the stack refuses: 401 → one silent sign-in → the list', async () => {
  const wx = shim('kate', { [SESSION]: { token: foreignToken('o-kate'), expiresAt: Date.now() + 3_600_000 } });
  const page = await createApi({ baseURL, wx }).listOrders();
  assert.deepEqual(page.orders, []);
  assert.equal(wx.logins, 1);
  assert.deepEqual(wx.requests, ['GET /orders 401', 'POST /auth/wechat 200', 'GET /orders 200']);
});

test('changeAddress: PUT with wx.chooseAddress\'s answer as it is; the order keeps the address fields, not errMsg', async () => {
  const api = createApi({ baseURL, wx: shim('mona') });
  const order = await api.createOrder([{ skuId: 'cup-01', qty: 1 }], undefined, [], HOME);
  const picked = {
    ...HOME, detailInfo: '阅江西路222号', streetName: '新港街道', detailInfoNew: '新港街道阅江西路222号',
    nationalCode: '510000', errMsg: 'chooseAddress:ok',
  };
  const changed = await api.changeAddress(order.orderId, picked);
  const kept = { ...HOME, detailInfo: '阅江西路222号', streetName: '新港街道' };
  assert.deepEqual(changed.address, kept);
  assert.deepEqual((await api.getOrder(order.orderId)).address, kept);
});

test('a cart of two SKUs is one order with the address, shown whole to its owner; without the address it is refused', async () => {
  const api = createApi({ baseURL, wx: shim('lena') });
  await assert.rejects(api.createOrder([{ skuId: 'cup-01', qty: 1 }], 'cart-lena-0'), (err) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 400);
    assert.equal(err.code, 'INVALID_REQUEST');
    assert.match(err.message, /address/);
    return true;
  });
  const order = await api.createOrder([{ skuId: 'cup-01', qty: 1 }, { skuId: 'saucer-02', qty: 2 }], 'cart-lena-1', [], HOME);
  assert.deepEqual(order.items.map((it) => [it.skuId, it.qty]), [['cup-01', 1], ['saucer-02', 2]]);
  const read = await api.getOrder(order.orderId);
  assert.deepEqual(read.address, HOME);
});

test('a queued SKU: joinQueue answers one ticket per buyer (202, WAITING, polled no sooner than asked); an order without an admission, or with one the stack did not mint, is 403 ADMISSION_REQUIRED and reserves nothing', async () => {
  await admin('POST', '/admin/skus', { skuId: 'drop-07', name: 'Drop', price: 19900, stock: 3, delivery: 'none', queue: true, fairWindowSeconds: 0 });
  const wx = shim('quinn');
  const api = createApi({ baseURL, wx });
  const sku = await api.getSku('drop-07');
  assert.equal(sku.queue, true);
  const ticket = await api.joinQueue('drop-07');
  assert.equal(ticket.skuId, 'drop-07');
  assert.equal(ticket.status, 'WAITING');
  assert.ok(ticket.nextPollSeconds >= 1, `nextPollSeconds ${ticket.nextPollSeconds}`);
  assert.equal((await api.joinQueue('drop-07')).ticket, ticket.ticket, 'one ticket per buyer and SKU');
  const again = await api.getTicket(ticket.ticket);
  assert.equal(again.ticket, ticket.ticket);
  assert.ok(['WAITING', 'ADMITTED', 'SOLD_OUT'].includes(again.status), again.status);
  for (const admission of [undefined, 'not-an-admission']) {
    await assert.rejects(api.createOrder([{ skuId: 'drop-07', qty: 1 }], `drop-${admission}`, [], undefined, admission),
      (err) => err instanceof ApiError && err.statusCode === 403 && err.code === 'ADMISSION_REQUIRED' && err.skuId === 'drop-07');
  }
  const sent = wx.sent.filter((r) => r.method === 'POST' && r.path === '/orders').map((r) => r.header['Admission-Token']);
  assert.deepEqual(sent, [undefined, 'not-an-admission']);
  await pause(1100); // the SKU's answer is at most 1 s old
  assert.equal((await api.getSku('drop-07')).available, 3, 'nothing reserved');
  await assert.rejects(api.joinQueue('cup-01'), (err) => err instanceof ApiError && err.statusCode === 409 && err.code === 'QUEUE_NOT_ENABLED');
});

test('a queued SKU\'s line: read without signing in, the same for everyone, Cache-Control public, max-age=1; a SKU without a waiting room 409 QUEUE_NOT_ENABLED, an unknown one 404', async () => {
  await admin('POST', '/admin/skus', { skuId: 'drop-09', name: 'Drop', price: 9900, stock: 1, delivery: 'none', queue: true, fairWindowSeconds: 0 });
  const wx = shim('tara');
  const api = createApi({ baseURL, wx });
  const line = await api.getLine('drop-09');
  assert.deepEqual(Object.keys(line).sort(), ['admissionsPerSecond', 'admittedThrough', 'placed', 'skuId', 'soldOut']);
  assert.equal(line.skuId, 'drop-09');
  assert.equal(line.soldOut, false);
  assert.ok(line.admittedThrough >= 0 && line.placed >= 0 && line.admissionsPerSecond >= 1, JSON.stringify(line));
  assert.equal(wx.answers.at(-1)['cache-control'], 'public, max-age=1');
  assert.equal(wx.logins, 0, 'no sign-in for the line');
  assert.equal(wx.sent.at(-1).header.Authorization, undefined);
  await assert.rejects(api.getLine('cup-01'), (err) => err instanceof ApiError && err.statusCode === 409 && err.code === 'QUEUE_NOT_ENABLED' && err.skuId === 'cup-01');
  await assert.rejects(api.getLine('no-such-sku'), (err) => err instanceof ApiError && err.statusCode === 404 && err.code === 'SKU_NOT_FOUND');
});

// runAdmitter starts a run of the admitter now (POST /_local/invoke/admitter), rather than
// waiting for its schedule's first run a minute after ready. A run ticks every 250 ms
// until its timeout (about a minute) or until its caller hangs up: the function returned
// hangs up.
function runAdmitter() {
  const hangUp = new AbortController();
  const run = fetch(`${baseURL}/_local/invoke/admitter`, { method: 'POST', signal: hangUp.signal }).then((res) => res.text(), () => '');
  return async () => {
    hangUp.abort();
    await run;
  };
}

test('a queued SKU reaches ADMITTED: polls send the last ticketToken, the order with the admission is 201 PENDING, the same admission again 403', async () => {
  await admin('POST', '/admin/skus', { skuId: 'drop-08', name: 'Drop', price: 9900, stock: 2, delivery: 'none', queue: true, fairWindowSeconds: 0 });
  const wx = shim('rosa');
  const api = createApi({ baseURL, wx });
  const joined = await api.joinQueue('drop-08');
  let ticket = joined;
  const stop = runAdmitter();
  try {
    for (let reads = 0; ticket.status === 'WAITING'; reads++) {
      assert.ok(reads < 30, `still WAITING after ${reads} reads`);
      await pause(Math.max(ticket.nextPollSeconds || 0, 1) * 1000); // never sooner than asked
      ticket = await api.getTicket(joined.ticket);
    }
  } finally {
    await stop();
  }
  assert.equal(ticket.status, 'ADMITTED');
  assert.equal(ticket.position, 1);
  assert.ok(ticket.admission && ticket.ticketToken, JSON.stringify(ticket));
  assert.ok(msUntil(ticket.admissionExpiresAt, Date.now()) > 0, ticket.admissionExpiresAt);

  const again = await api.getTicket(joined.ticket);
  assert.equal(wx.sent.at(-1).header['Ticket-Token'], ticket.ticketToken);
  assert.equal(again.status, 'ADMITTED');
  assert.equal(again.admission, ticket.admission);
  assert.equal(again.ticketToken, undefined, 'answered from the token: the ticket was not read');

  const order = await api.createOrder([{ skuId: 'drop-08', qty: 1 }], 'drop-08-a', [], undefined, ticket.admission);
  assert.equal(order.status, 'PENDING');
  await assert.rejects(api.createOrder([{ skuId: 'drop-08', qty: 1 }], 'drop-08-b', [], undefined, ticket.admission),
    (err) => err instanceof ApiError && err.statusCode === 403 && err.code === 'ADMISSION_REQUIRED');
  await pause(1100); // the SKU's answer is at most 1 s old
  assert.equal((await api.getSku('drop-08')).available, 1, 'one admission, one order, one unit');
});

// sweep runs closeOrder's sweep now, which passes released units to the waitlist.
async function sweep() {
  const res = await fetch(`${baseURL}/_local/invoke/closeOrder`, { method: 'POST' });
  assert.equal(res.status, 200);
  return res.json();
}

test('the waitlist through api.js: join (once per buyer), read, a released unit HELD for the first buyer and ordered (DONE), leave (404 after)', async () => {
  await admin('POST', '/admin/skus', { skuId: 'pin-09', name: 'Pin', price: 5900, stock: 1, delivery: 'none' });
  const sara = createApi({ baseURL, wx: shim('sara') });
  const tom = createApi({ baseURL, wx: shim('tom') });
  const uma = createApi({ baseURL, wx: shim('uma') });
  const last = await sara.createOrder([{ skuId: 'pin-09', qty: 1 }], 'pin-09-sara');
  const joined = await tom.joinWaitlist('pin-09', true);
  assert.deepEqual(joined, { skuId: 'pin-09', status: 'WAITING' });
  assert.deepEqual(await tom.joinWaitlist('pin-09', true), joined, 'one place per buyer');
  assert.deepEqual(await uma.joinWaitlist('pin-09', false), joined);
  assert.deepEqual(await tom.getWaitlist('pin-09'), joined);

  await sweep(); // sold out: noted
  await sara.cancel(last.orderId);
  // A hold comes 30 s after the first join at the earliest (docs/design.md, "The
  // orders' flag"): sweep every second until then, for up to 2 minutes (a sweep takes
  // longer on a loaded machine; the loop ends at the first hold).
  let holds = 0;
  for (const until = Date.now() + 120000; holds === 0 && Date.now() < until;) {
    holds = (await sweep()).waitlistHolds;
    if (holds === 0) await pause(1000);
  }
  assert.equal(holds, 1);
  const held = await tom.getWaitlist('pin-09');
  assert.equal(held.status, 'HELD');
  assert.ok(msUntil(held.holdExpiresAt, Date.now()) > 0, held.holdExpiresAt);
  assert.equal((await uma.getWaitlist('pin-09')).status, 'WAITING', 'the next in line waits');
  await assert.rejects(sara.createOrder([{ skuId: 'pin-09', qty: 1 }], 'pin-09-sara-2'),
    (err) => err instanceof ApiError && err.statusCode === 409 && err.code === 'STOCK_OUT');
  const order = await tom.createOrder([{ skuId: 'pin-09', qty: 1 }], 'pin-09-tom');
  assert.equal(order.status, 'PENDING');
  assert.equal((await tom.getWaitlist('pin-09')).status, 'DONE');

  await uma.leaveWaitlist('pin-09');
  await assert.rejects(uma.getWaitlist('pin-09'),
    (err) => err instanceof ApiError && err.statusCode === 404 && err.code === 'WAITLIST_NOT_FOUND');
});
