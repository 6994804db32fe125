// The SKU page of a queued SKU (its waiting room) and of a sold-out one (its waitlist),
// against a fake API; the clocks are node's mock timers.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, text, el, tap, json, signedIn, TOKEN } = require('../harness.js');

const START = Date.parse('2026-03-01T12:00:00Z');
const sku = (over) => ({ skuId: 'drop-01', name: 'Numbered print', price: 19900, currency: 'CNY', status: 'ON_SALE', available: 5, delivery: 'none', queue: true, ...over });
const ticket = (over) => ({ ticket: 'tk-1', skuId: 'drop-01', status: 'WAITING', position: null, estimatedWaitSeconds: null, nextPollSeconds: 3, ...over });
const polls = (wx) => wx.requests.filter((r) => r.path === '/queue/tk-1').length;
const iso = (ms) => new Date(ms).toISOString();

/** queued opens the page of a queued SKU whose GET /queue/tk-1 answers the tickets in turn. */
async function queued(t, answers, routes = {}) {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: START });
  let n = 0;
  const wx = fakeWx({
    'GET /skus/drop-01': json(200, sku()),
    'POST /skus/drop-01/queue': json(202, ticket()),
    'GET /queue/tk-1': () => ({ status: 200, body: answers[Math.min(n++, answers.length - 1)] }),
    ...routes,
  }, { storage: signedIn() });
  const opened = openPage('sku', { wx, query: { skuId: 'drop-01' } });
  await settle(wx);
  t.after(() => opened.page.instance.onUnload());
  return opened;
}

/** advance moves the mock clock by ms and lets the page's requests answer. */
async function advance(t, wx, ms) {
  t.mock.timers.tick(ms);
  await settle(wx);
}

test('queued SKU: buy takes a ticket, shows the place in line and the wait, reads the ticket no sooner than nextPollSeconds, and orders with the admission', async (t) => {
  const { page, wx } = await queued(t, [
    ticket({ position: 5, estimatedWaitSeconds: 40, nextPollSeconds: 2 }),
    ticket({ status: 'ADMITTED', position: 5, estimatedWaitSeconds: 0, admission: 'adm-1', admissionExpiresAt: iso(START + 5000 + 180_000) }),
  ], { 'POST /orders': json(201, { orderId: 'o-1', status: 'PENDING' }) });
  assert.equal(el(page, '#add'), undefined, 'a queued SKU is not put in the cart');
  await tap(page, '#buy');
  await settle(wx);
  assert.equal(wx.requests.find((r) => r.path === '/skus/drop-01/queue').method, 'POST');
  assert.equal(text(page, '#queue-status'), '正在为你排队…');
  assert.equal(el(page, '#buy'), undefined);
  await advance(t, wx, 2999);
  assert.equal(polls(wx), 0, 'not before nextPollSeconds (3)');
  await advance(t, wx, 1);
  assert.equal(polls(wx), 1);
  assert.equal(text(page, '#queue-position'), '你排在第 5 位');
  assert.equal(text(page, '#queue-wait'), '预计等待 00:40');
  await advance(t, wx, 1999);
  assert.equal(polls(wx), 1, 'not before the new nextPollSeconds (2)');
  await advance(t, wx, 1);
  assert.equal(polls(wx), 2);
  assert.equal(text(page, '#queue-status'), '轮到你了，请在 03:00 内下单');
  await advance(t, wx, 1000);
  assert.equal(text(page, '#queue-status'), '轮到你了，请在 02:59 内下单');
  await advance(t, wx, 60_000);
  assert.equal(polls(wx), 2, 'an admitted ticket is not read again');
  await tap(page, '#order');
  await settle(wx);
  const post = wx.requests.find((r) => r.method === 'POST' && r.path === '/orders');
  assert.equal(post.header['Admission-Token'], 'adm-1');
  assert.equal(post.header.Authorization, `Bearer ${TOKEN}`);
  assert.deepEqual(post.data.items, [{ skuId: 'drop-01', qty: 1 }]);
  assert.deepEqual(wx.navigations, [{ how: 'navigateTo', url: '/pages/pay/index?orderId=o-1' }]);
  assert.equal(el(page, '#order'), undefined, 'the admission is used');
  assert.equal(el(page, '#queue'), undefined);
});

test('queued SKU: after an answer carried a ticketToken, the reads send it as Ticket-Token; an answer without one keeps the last', async (t) => {
  const { page, wx } = await queued(t, [
    ticket({ position: 5, estimatedWaitSeconds: 40, nextPollSeconds: 1, ticketToken: 'tt-1' }),
    ticket({ position: 4, estimatedWaitSeconds: 30, nextPollSeconds: 1 }),
    ticket({ position: 3, estimatedWaitSeconds: 20, nextPollSeconds: 1, ticketToken: 'tt-2' }),
    ticket({ position: 2, estimatedWaitSeconds: 10, nextPollSeconds: 1 }),
  ]);
  await tap(page, '#buy');
  await settle(wx);
  for (let i = 0; i < 5; i++) await advance(t, wx, i === 0 ? 3000 : 1000);
  const sent = wx.requests.filter((r) => r.path === '/queue/tk-1').map((r) => r.header['Ticket-Token']);
  assert.deepEqual(sent, [undefined, 'tt-1', 'tt-1', 'tt-2', 'tt-2']);
  assert.equal(text(page, '#queue-position'), '你排在第 2 位');
});

test('queued SKU: a hidden page reads its ticket no more; shown again, no sooner than it was due', async (t) => {
  // Not placed yet: the ticket itself is read (a placed one reads the line: below).
  const { page, wx } = await queued(t, [ticket({ estimatedWaitSeconds: 90, nextPollSeconds: 10 })]);
  await tap(page, '#buy');
  await settle(wx);
  page.instance.onHide();
  await advance(t, wx, 60_000);
  assert.equal(polls(wx), 0, 'hidden: no read');
  page.instance.onShow();
  await advance(t, wx, 0);
  assert.equal(polls(wx), 1, 'shown after it was due: read at once');
  page.instance.onHide();
  page.instance.onShow();
  await advance(t, wx, 9999);
  assert.equal(polls(wx), 1, 'shown again before it was due: not sooner');
  await advance(t, wx, 1);
  assert.equal(polls(wx), 2);
  page.instance.onUnload();
  await advance(t, wx, 60_000);
  assert.equal(polls(wx), 2, 'unloaded: no read');
});

test('queued SKU: SOLD_OUT ends the wait and offers the waitlist; EXPIRED says the turn ran out', async (t) => {
  const { page, wx } = await queued(t, [ticket({ status: 'SOLD_OUT', nextPollSeconds: undefined })]);
  await tap(page, '#buy');
  await settle(wx);
  await advance(t, wx, 3000);
  assert.equal(text(page, '#queue-status'), '已售罄，排队结束。');
  assert.equal(text(page, '#notify'), '到货提醒');
  await advance(t, wx, 60_000);
  assert.equal(polls(wx), 1, 'SOLD_OUT is not read again');
  page.instance.onUnload();
  t.mock.timers.reset();

  const expired = await queued(t, [ticket({ status: 'EXPIRED' })], { 'POST /skus/drop-01/queue': json(202, ticket({ status: 'EXPIRED' })) });
  await tap(expired.page, '#buy');
  await settle(expired.wx);
  assert.equal(text(expired.page, '#queue-status'), '你的购买资格已过期。');
  assert.equal(el(expired.page, '#order'), undefined);
});

test('queued SKU: an admission that runs out on the page turns EXPIRED; the refusals read in plain words', async (t) => {
  for (const [code, want] of [['ADMISSION_REQUIRED', /需排队购买/], ['RISK_REJECTED', /微信安全评估未通过/]]) {
    const admitted = ticket({ status: 'ADMITTED', admission: 'adm-1', admissionExpiresAt: iso(START + 5000) });
    const { page, wx } = await queued(t, [admitted], {
      'POST /skus/drop-01/queue': json(202, admitted),
      'POST /orders': json(403, { code, message: 'refused', skuId: 'drop-01' }),
    });
    await tap(page, '#buy');
    await settle(wx);
    await tap(page, '#order');
    await settle(wx);
    assert.match(text(page, '#error'), want);
    await advance(t, wx, 5000);
    assert.equal(text(page, '#queue-status'), '你的购买资格已过期。');
    assert.equal(el(page, '#order'), undefined);
    page.instance.onUnload();
    t.mock.timers.reset();
  }
});

const lineReads = (wx) => wx.requests.filter((r) => r.path === '/skus/drop-01/line').length;
const line = (over) => ({ skuId: 'drop-01', admittedThrough: 0, soldOut: false, placed: 10, admissionsPerSecond: 1, ...over });
/** lines answers GET /skus/drop-01/line with the lines in turn, the last one from then on. */
function lines(...answers) {
  let n = 0;
  return { 'GET /skus/drop-01/line': () => ({ status: 200, body: answers[Math.min(n++, answers.length - 1)] }) };
}

test('queued SKU with a position: reads the line each second, not its ticket, the wait from the line; admitted through its position, reads the ticket for the admission', async (t) => {
  const { page, wx } = await queued(t, [
    ticket({ position: 5, estimatedWaitSeconds: 40, nextPollSeconds: 30 }),
    ticket({ status: 'ADMITTED', position: 5, estimatedWaitSeconds: 0, admission: 'adm-1', admissionExpiresAt: iso(START + 6000 + 180_000) }),
  ], lines(line({ admittedThrough: 1 }), line({ admittedThrough: 2 }), line({ admittedThrough: 5 })));
  await tap(page, '#buy');
  await settle(wx);
  await advance(t, wx, 3000);
  assert.equal(polls(wx), 1, 'placed at the first read');
  assert.equal(lineReads(wx), 0);
  await advance(t, wx, 999);
  assert.equal(lineReads(wx), 0, 'not sooner than a second');
  await advance(t, wx, 1);
  assert.equal(lineReads(wx), 1);
  assert.equal(polls(wx), 1, 'the line, not the ticket');
  assert.equal(text(page, '#queue-wait'), '预计等待 00:04');
  await advance(t, wx, 1000);
  assert.equal(text(page, '#queue-wait'), '预计等待 00:03');
  assert.equal(wx.requests.filter((r) => r.path === '/skus/drop-01/line').every((r) => r.header.Authorization === undefined), true, 'the line is read without a token');
  await advance(t, wx, 1000);
  assert.equal(lineReads(wx), 3);
  assert.equal(polls(wx), 2, 'admitted through its position: the ticket is read');
  assert.equal(text(page, '#queue-status'), '轮到你了，请在 03:00 内下单');
  await advance(t, wx, 10_000);
  assert.deepEqual([lineReads(wx), polls(wx)], [3, 2], 'nothing read once ADMITTED');
});

test('queued SKU with a position: the line sold out is SOLD_OUT at once, the waitlist offered, nothing read after', async (t) => {
  const { page, wx } = await queued(t, [ticket({ position: 9000, estimatedWaitSeconds: 900, nextPollSeconds: 30 })],
    lines(line({ admittedThrough: 10 }), line({ admittedThrough: 10, soldOut: true })));
  await tap(page, '#buy');
  await settle(wx);
  await advance(t, wx, 3000);
  await advance(t, wx, 1000);
  assert.match(text(page, '#queue-wait'), /预计等待/);
  await advance(t, wx, 1000);
  assert.equal(text(page, '#queue-status'), '已售罄，排队结束。');
  assert.equal(text(page, '#notify'), '到货提醒');
  await advance(t, wx, 60_000);
  assert.deepEqual([lineReads(wx), polls(wx)], [2, 1], 'SOLD_OUT from the line: neither is read again');
});

test('queued SKU with a position: a hidden page reads the line no more; shown again, the next second', async (t) => {
  const { page, wx } = await queued(t, [ticket({ position: 40, estimatedWaitSeconds: 40, nextPollSeconds: 30 })], lines(line()));
  await tap(page, '#buy');
  await settle(wx);
  await advance(t, wx, 3000);
  await advance(t, wx, 1000);
  assert.equal(lineReads(wx), 1);
  page.instance.onHide();
  await advance(t, wx, 60_000);
  assert.equal(lineReads(wx), 1, 'hidden: no read');
  page.instance.onShow();
  await advance(t, wx, 0);
  assert.deepEqual([lineReads(wx), polls(wx)], [1, 2], 'shown after its ticket was due: the ticket is read at once');
  await advance(t, wx, 1000);
  assert.deepEqual([lineReads(wx), polls(wx)], [2, 2]);
});

test('queued SKU with a position: its ticket is still read when its nextPollSeconds has passed, and when the line cannot be read, no sooner', async (t) => {
  const { page, wx } = await queued(t, [ticket({ position: 50, estimatedWaitSeconds: 50, nextPollSeconds: 5 })],
    { 'GET /skus/drop-01/line': () => { throw { errMsg: 'request:fail timeout' }; } });
  await tap(page, '#buy');
  await settle(wx);
  await advance(t, wx, 3000);
  assert.equal(polls(wx), 1);
  for (let i = 0; i < 4; i++) await advance(t, wx, 1000);
  assert.equal(polls(wx), 1, 'the line failing: the ticket waits for its nextPollSeconds');
  assert.equal(text(page, '#error'), '');
  await advance(t, wx, 1000);
  assert.equal(polls(wx), 2);
  assert.equal(text(page, '#queue-position'), '你排在第 50 位');
});

/** soldOut opens a sold-out SKU's page with the waitlist routes given. */
async function soldOut(t, routes, options = {}) {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: START });
  const wx = fakeWx({ 'GET /skus/drop-01': json(200, sku({ status: 'SOLD_OUT', available: 0, queue: false })), ...routes }, { storage: signedIn(), ...options });
  const opened = openPage('sku', { wx, query: { skuId: 'drop-01' } });
  await settle(wx);
  t.after(() => opened.page.instance.onUnload());
  return opened;
}

test('sold out, not on the waitlist: 到货提醒 asks for the waitlist message and joins subscribed, or unsubscribed when refused', async (t) => {
  for (const [answer, subscribed] of [['accept', true], ['reject', false]]) {
    const { page, wx } = await soldOut(t, {
      'GET /skus/drop-01/waitlist': json(404, { code: 'WAITLIST_NOT_FOUND', message: 'none' }),
      'POST /skus/drop-01/waitlist': (req) => ({ status: 201, body: { skuId: 'drop-01', status: 'WAITING', quantity: 1, holdExpiresAt: null, echo: req.data } }),
    }, { subscribe: { 'local-waitlist': answer } });
    assert.equal(text(page, '#buy'), '已售罄');
    assert.equal(text(page, '#error'), '');
    await tap(page, '#notify');
    await settle(wx);
    assert.deepEqual(wx.subscribeAsks, [['local-waitlist']]);
    assert.deepEqual(wx.requests.find((r) => r.method === 'POST').data, { subscribed });
    assert.match(text(page, '#waitlist-note'), /已登记到货提醒/);
    assert.equal(el(page, '#notify'), undefined);
    assert.equal(text(page, '#leave'), '取消提醒');
    page.instance.onUnload();
    t.mock.timers.reset();
  }
});

test('sold out, HELD: the units and the time left count down; 立即购买 orders them without an admission', async (t) => {
  const { page, wx } = await soldOut(t, {
    'GET /skus/drop-01/waitlist': json(200, { skuId: 'drop-01', status: 'HELD', quantity: 2, holdExpiresAt: iso(START + 120_000) }),
    'POST /orders': json(201, { orderId: 'o-2', status: 'PENDING' }),
  });
  assert.equal(text(page, '#waitlist-note'), '已为你保留 2 件，请在 02:00 内购买');
  await advance(t, wx, 1000);
  assert.equal(text(page, '#waitlist-note'), '已为你保留 2 件，请在 01:59 内购买');
  await tap(page, '#held-buy');
  await settle(wx);
  const post = wx.requests.find((r) => r.method === 'POST' && r.path === '/orders');
  assert.deepEqual(post.data.items, [{ skuId: 'drop-01', qty: 2 }]);
  assert.equal(post.header['Admission-Token'], undefined);
  assert.deepEqual(wx.navigations, [{ how: 'navigateTo', url: '/pages/pay/index?orderId=o-2' }]);
});

test('sold out, HELD until it runs out: the entry is read again and shows PASSED; leaving deletes it and offers 到货提醒 again', async (t) => {
  let reads = 0;
  const { page, wx } = await soldOut(t, {
    'GET /skus/drop-01/waitlist': () => ({ status: 200, body: ++reads === 1
      ? { skuId: 'drop-01', status: 'HELD', quantity: 1, holdExpiresAt: iso(START + 2000) }
      : { skuId: 'drop-01', status: 'PASSED', quantity: 1, holdExpiresAt: iso(START + 2000) } }),
    'DELETE /skus/drop-01/waitlist': json(204),
  });
  await advance(t, wx, 2000);
  assert.equal(reads, 2);
  assert.equal(text(page, '#waitlist-note'), '为你保留的商品已过期，名额已给下一位。');
  assert.equal(el(page, '#held-buy'), undefined);
  await tap(page, '#leave');
  await settle(wx);
  assert.ok(wx.requests.some((r) => r.method === 'DELETE' && r.path === '/skus/drop-01/waitlist'));
  assert.equal(el(page, '#waitlist'), undefined);
  assert.equal(text(page, '#notify'), '到货提醒');
});

test('sold out without a kept session: no sign-in just to look, 到货提醒 offered', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: START });
  const wx = fakeWx({ 'GET /skus/drop-01': json(200, sku({ status: 'SOLD_OUT', available: 0 })) });
  const { page } = openPage('sku', { wx, query: { skuId: 'drop-01' } });
  await settle(wx);
  assert.equal(wx.logins, 0);
  assert.equal(text(page, '#notify'), '到货提醒');
});
