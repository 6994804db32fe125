// The merchant console in a real browser: Debian's chromium driven by puppeteer-core
// (which downloads no browser), against the local stack started on free ports. A whole
// sale from the console alone: the owner signs in, creates a SKU, opens its sale,
// watches an order arrive on the live page, refunds part of it, ships it, sees the
// buyer's receipt, rejects one after-sale and approves and receives another, runs
// reconcile; the operator is refused a restock; the viewer can change nothing (403);
// a buyer's token reaches no merchant route. Screenshots of the main pages go to
// $SHOTS (a temporary directory unless set; `SHOTS=../docs/console npm run
// test:browser` refreshes the README's).
//
//   cd console && npm ci && npm run build && npm run test:browser
//
// Needs Go (the stack is built with it), the built console (dist/) and chromium
// ($CHROMIUM, default /usr/bin/chromium).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer from 'puppeteer-core';

const repo = resolve(import.meta.dirname, '../..');
const shots = process.env.SHOTS ? resolve(process.env.SHOTS) : mkdtempSync(join(tmpdir(), 'console-shots-'));
mkdirSync(shots, { recursive: true });
const staff = { owner: 'owner-pass-local', operator: 'operator-pass-local', viewer: 'viewer-pass-local' };

let stack, api, consoleURL, browser, profile;

/** startStack builds cmd/local and starts it on free ports; resolves with the ready line's URLs. */
async function startStack() {
  const bin = join(mkdtempSync(join(tmpdir(), 'console-stack-')), 'local');
  execFileSync('go', ['build', '-o', bin, './cmd/local'], { cwd: repo, stdio: 'inherit' });
  const free = '127.0.0.1:0';
  stack = spawn(bin, ['-addr', free, '-dynamodb-addr', free, '-sqs-addr', free, '-wechatpay-addr', free, '-wxlogin-addr', free,
    '-wxapi-addr', free, '-seed', 'examples/seed.json', '-staff', 'examples/staff.json', '-console', 'console/dist', '-refund-interval', '1s'],
  { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('the stack was not ready in 120 s:\n' + out)), 120_000);
    stack.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/ ready api=(\S+) .* console=(\S+) signIn=(\S+)/);
      if (m) { clearTimeout(timer); ok({ api: m[1], console: m[2], signIn: m[3] }); }
    });
    stack.on('exit', (code) => fail(new Error(`the stack exited (${code}):\n${out}`)));
  });
}

/** call sends a request to the local API as the test's own client (a buyer, the WeChat Pay stand-in). */
async function call(method, path, { headers = {}, body } = {}) {
  const resp = await fetch(api + path, { method, headers: { 'Content-Type': 'application/json', ...headers }, body: body && JSON.stringify(body) });
  const text = await resp.text();
  return { status: resp.status, body: text ? JSON.parse(text) : null };
}

/** signIn opens the console in a fresh browser context and signs in on the login page. */
async function signIn(username, { shot } = {}) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1366, height: 860 });
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(consoleURL, { waitUntil: 'networkidle0' });
  await page.waitForSelector('#username');
  await page.type('#username', username);
  await page.type('#password', staff[username]);
  if (shot) await page.screenshot({ path: join(shots, shot) });
  await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle0' }), page.click('button[type=submit]')]);
  await page.waitForSelector(`[data-role="${username}"]`, { timeout: 20_000 });
  return page;
}

async function go(page, hash) {
  await page.evaluate((h) => { window.location.hash = h; }, hash);
  await new Promise((r) => setTimeout(r, 300));
}

/**
 * settle waits until no CSS animation or transition runs (a modal's opening zoom): a
 * click lands where puppeteer measured the element, which a running zoom moves, so a
 * click during one can miss (the sale's OK then sent nothing, about one run in two).
 */
async function settle(page) {
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'), { timeout: 5000 });
}

/** modalOK clicks the open modal's OK button, once the modal stands still. */
async function modalOK(page) {
  await settle(page);
  await page.click('.arco-modal-footer .arco-btn-primary');
}

/** messageText waits for an Arco message and returns its text. */
async function messageText(page, pattern) {
  const handle = await page.waitForFunction((p) => {
    const texts = [...document.querySelectorAll('.arco-message')].map((m) => m.textContent);
    return texts.find((t) => new RegExp(p).test(t));
  }, { timeout: 15_000 }, pattern);
  return handle.jsonValue();
}

/** retype replaces what a field holds with text. */
async function retype(page, selector, text) {
  await page.click(selector, { clickCount: 3 });
  await page.type(selector, text);
}

/** newSku opens 新建商品 and fills the SKU's id, name, price (yuan) and initial stock. */
async function newSku(page, { id, name, price, stock }) {
  await page.waitForSelector('#create-sku');
  await page.click('#create-sku');
  await page.waitForSelector('#sku-id');
  await page.type('#sku-id', id);
  await page.type('#sku-name', name);
  await page.type('#sku-price', price);
  await retype(page, '#sku-stock', stock);
}

async function textOf(page, selector) {
  return page.$eval(selector, (e) => e.textContent);
}

async function waitText(page, selector, pattern, timeout = 20_000) {
  await page.waitForFunction((s, p) => new RegExp(p).test(document.querySelector(s)?.textContent ?? ''), { timeout }, selector, pattern);
}

before(async () => {
  const ready = await startStack();
  api = ready.api;
  consoleURL = ready.console;
  assert.equal(ready.signIn, 'owner:owner-pass-local', 'the ready line names an owner sign-in');
  profile = mkdtempSync(join(tmpdir(), 'console-profile-'));
  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    userDataDir: profile,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--lang=zh-CN'],
  });
});

after(async () => {
  await browser?.close();
  stack?.kill('SIGTERM');
  if (profile) rmSync(profile, { recursive: true, force: true });
  console.log('screenshots in', shots);
});

let orderId;
/** address is the buyer's delivery address (the lamp ships by express: an order of it needs one). */
const address = { userName: '张三', telNumber: '18912341234', provinceName: '广东省', cityName: '广州市', countyName: '海珠区', detailInfo: '新港中路397号' };

test('the owner runs a sale from the console', async (t) => {
  const page = await signIn('owner', { shot: 'login.png' });

  await t.test('creates a SKU, off sale', async () => {
    await newSku(page, { id: 'lamp-05', name: '黄铜台灯', price: '199', stock: '20' });
    await page.type('#sku-limit', '2');
    await page.click('#sku-onsale');
    await modalOK(page);
    await messageText(page, 'lamp-05');
    await waitText(page, '.arco-table', 'lamp-05');
    const sku = await call('GET', '/admin/skus/lamp-05');
    assert.equal(sku.status, 200);
    assert.equal(sku.body.onHand, 20);
    assert.equal(sku.body.status, 'OFF_SALE');
    assert.equal(sku.body.updatedBy, 'staff:owner', 'the change records the staff member');
  });

  await t.test('opens its sale now', async () => {
    const row = await page.waitForSelector('xpath///tr[.//td[contains(., "lamp-05")]]');
    await (await row.$('[data-action="sale"]')).click();
    await page.waitForSelector('#sale-form');
    await settle(page);
    await page.click('#sale-form label:first-child');
    await modalOK(page);
    await page.waitForSelector('xpath///tr[.//td[contains(., "lamp-05")]]//*[@data-status="ON_SALE"]', { timeout: 15_000 });
    assert.equal((await call('GET', '/admin/skus/lamp-05')).body.status, 'ON_SALE');
    await page.screenshot({ path: join(shots, 'skus.png') });
  });

  await t.test('watches an order arrive on the live page, paid', async () => {
    await go(page, '/live');
    const card = '[data-sku="lamp-05"]';
    await page.waitForSelector(card);
    await new Promise((r) => setTimeout(r, 3500)); // one refresh: the next readings count what changed
    const placed = await call('POST', '/orders', { headers: { 'X-User-Id': 'alice' }, body: { items: [{ skuId: 'lamp-05', qty: 2 }], address } });
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    orderId = placed.body.orderId;
    await waitText(page, `${card} [data-field="reserved"]`, '^.*2$');
    const paid = await call('POST', '/_local/pay/' + orderId);
    assert.equal(paid.status, 204);
    await waitText(page, `${card} [data-field="sold"]`, '^.*2$');
    await waitText(page, `${card} [data-field="available"]`, '^.*18$');
    await page.screenshot({ path: join(shots, 'live.png') });
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2 }); // isMobile would reload the page
    await new Promise((r) => setTimeout(r, 500));
    await page.screenshot({ path: join(shots, 'live-phone.png') });
    await page.setViewport({ width: 1366, height: 860 });
  });

  await t.test("finds the order by its buyer", async () => {
    await go(page, '/orders');
    await page.type('#buyer-search input, input#buyer-search', 'alice');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`a[href="#/orders/${orderId}"]`, { timeout: 15_000 });
    await page.click(`a[href="#/orders/${orderId}"]`);
    await page.waitForSelector(`#order-detail[data-order="${orderId}"]`);
  });

  await t.test('refunds one of the two lamps', async () => {
    await page.waitForSelector('#order-detail');
    await waitText(page, '#order-detail', '已支付');
    await page.click('#refund-button');
    await page.waitForSelector('#refund-qty-lamp-05 input, input#refund-qty-lamp-05');
    await settle(page);
    await page.type('#refund-qty-lamp-05 input, input#refund-qty-lamp-05', '1');
    await page.type('#refund-reason', '一件退货');
    await modalOK(page);
    await messageText(page, orderId + '_R');
    await waitText(page, '#order-refunds', orderId + '_R');
    const order = (await call('GET', '/admin/orders/' + orderId)).body;
    assert.equal(order.status, 'PAID', 'part of the order is refunded; it stays PAID');
    assert.deepEqual(order.refunds.map((r) => r.lines), [[{ skuId: 'lamp-05', qty: 1 }]]);
  });

  await t.test('ships it with a carrier from the list', async () => {
    await page.click('#ship-button');
    await page.waitForSelector('#ship-form');
    await settle(page);
    for (let i = 0; ; i++) {
      await (await page.$$('#ship-form .arco-select-view'))[1].click(); // the second select: the carrier
      if (await page.waitForSelector('.arco-select-option', { timeout: 3000 }).catch(() => null)) break;
      if (i === 2) throw new Error('the carrier list did not open');
    }
    await page.evaluate(() => [...document.querySelectorAll('.arco-select-option')].find((o) => o.textContent.includes('YTO')).click());
    await page.type('#ship-tracking', 'YT3750696145732');
    await modalOK(page);
    await messageText(page, 'parcel-');
    await waitText(page, '#order-shipments', 'YT3750696145732');
    const order = (await call('GET', '/admin/orders/' + orderId)).body;
    assert.equal(order.shipments.length, 1);
    assert.equal(order.shipments[0].carrier, 'YTO');
    await waitText(page, '#order-receipt', '待买家确认收货');
    assert.equal(await textOf(page, '#order-address'), '张三 · 18912341234 · 广东省广州市海珠区新港中路397号', 'the merchant sees where the parcel goes, whole');
  });

  await t.test("shows the buyer's receipt and decides their after-sales", async () => {
    for (let i = 0; (await call('GET', '/admin/orders/' + orderId)).body.shipping.status !== 'UPLOADED'; i++) {
      if (i === 100) throw new Error('the shipment was not uploaded to WeChat in 20 s');
      await new Promise((r) => setTimeout(r, 200));
    }
    const confirmed = await fetch(api + '/_local/receipt/' + orderId, { method: 'POST' }); // WeChat's push, answered "success"
    assert.equal(confirmed.status, 200, await confirmed.text());
    const ask = (body) => call('POST', `/orders/${orderId}/aftersales`, { headers: { 'X-User-Id': 'alice' }, body });
    assert.equal((await ask({ aftersaleId: 'as-1', kind: 'refund', reason: '不想要了' })).status, 202);
    await page.click('#order-detail .arco-card-header .arco-btn'); // 刷新
    await waitText(page, '#order-receipt', '已确认收货.*买家确认');
    const row = (id) => `xpath///*[@id="order-aftersales"]//tr[.//td[contains(., "${id}")]]`;
    await page.waitForSelector(row('as-1') + '//*[@data-status="REQUESTED"]');
    assert.equal(await page.$(row('as-1') + '//*[contains(@class, "aftersale-received")]'), null, 'no received on a request');

    await (await page.waitForSelector(row('as-1') + '//*[contains(@class, "aftersale-reject")]')).click();
    await page.waitForSelector('#aftersale-reject-reason');
    await settle(page);
    await page.type('#aftersale-reject-reason', '已发货，请申请退货退款');
    await modalOK(page);
    await messageText(page, 'as-1');
    await page.waitForSelector(row('as-1') + '//*[@data-status="REJECTED"]', { timeout: 15_000 });
    assert.equal((await call('GET', '/admin/orders/' + orderId)).body.aftersales[0].rejectReason, '已发货，请申请退货退款');

    assert.equal((await ask({ aftersaleId: 'as-2', kind: 'return-refund', reason: '灯罩有划痕' })).status, 202);
    await page.click('#order-detail .arco-card-header .arco-btn');
    // Approve and received ask once more (Popconfirm). Its OK is clicked in the page, not
    // at coordinates: the popup's opening zoom starts a frame after it mounts, so
    // settle() can see no animation yet and a click at the measured spot misses.
    const confirmStep = async (step) => {
      await (await page.waitForSelector(row('as-2') + `//*[contains(@class, "aftersale-${step}")]`, { timeout: 15_000 })).click();
      await page.waitForSelector('.arco-popconfirm .arco-btn-primary');
      const [resp] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith(`/aftersales/as-2/${step}`), { timeout: 15_000 }),
        page.$eval('.arco-popconfirm .arco-btn-primary', (b) => b.click()),
      ]);
      assert.equal(resp.status(), 200, step);
    };
    await confirmStep('approve');
    await page.waitForSelector(row('as-2') + '//*[@data-status="APPROVED"]', { timeout: 15_000 });
    const before = (await call('GET', '/admin/skus/lamp-05')).body.onHand;
    await confirmStep('received');
    await page.waitForSelector(row('as-2') + '//*[@data-status="REFUNDING" or @data-status="REFUNDED"]', { timeout: 15_000 });
    const order = (await call('GET', '/admin/orders/' + orderId)).body;
    assert.deepEqual(order.aftersales.map((a) => [a.aftersaleId, a.status === 'REFUNDED' ? 'REFUNDING' : a.status]), [['as-1', 'REJECTED'], ['as-2', 'REFUNDING']]);
    assert.equal(order.refunds.length, 2, 'the return started its refund');
    assert.equal((await call('GET', '/admin/skus/lamp-05')).body.onHand, before + 1, 'the lamp is back in stock');
    assert.equal(await page.$(row('as-2') + '//button'), null, 'no step left');
    await page.waitForFunction(() => !document.querySelector('.arco-message'), { timeout: 15_000 }); // the picture without them
    await page.screenshot({ path: join(shots, 'order.png'), fullPage: true });
  });

  await t.test('runs reconcile: the books balance', async () => {
    await go(page, '/reconcile');
    await page.click('#run-reconcile');
    await waitText(page, '#report', '账实相符');
    await page.screenshot({ path: join(shots, 'reconcile.png') });
    await go(page, '/refunds');
    await new Promise((r) => setTimeout(r, 800));
    await page.screenshot({ path: join(shots, 'refunds.png') });
  });
  await page.browserContext().close();
});

test('the owner sells a SKU through its waiting room, then changes its settings', async () => {
  const page = await signIn('owner');
  await newSku(page, { id: 'print-06', name: '限量版画', price: '999', stock: '10' });
  await page.click('#sku-queue');
  await page.waitForSelector('#sku-fair-window:not([disabled])');
  await retype(page, '#sku-fair-window', '30');
  await retype(page, '#sku-risk', '3');
  await modalOK(page);
  await messageText(page, 'print-06');
  const badge = 'xpath///tr[.//td[contains(., "print-06")]]//*[@data-queue]';
  await page.waitForSelector(badge);
  await waitText(page, '.arco-table', '排队 · 公平窗口 30 秒');
  assert.match(await page.$eval(badge, (e) => e.getAttribute('data-queue') + ' ' + e.textContent), /^on 排队 · 公平窗口 30 秒风控 ≥3$/);
  let sku = (await call('GET', '/admin/skus/print-06')).body;
  assert.deepEqual([sku.queue, sku.fairWindowSeconds, sku.riskThreshold], [true, 30, 3]);
  assert.equal((await call('GET', '/skus/print-06')).body.queue, true, 'buyers see the waiting room');
  await page.screenshot({ path: join(shots, 'skus-queue.png') });

  const row = await page.waitForSelector('xpath///tr[.//td[contains(., "print-06")]]');
  await (await row.$('[data-action="queue"]')).click();
  await page.waitForSelector('#queue-form #sku-queue');
  await settle(page);
  await page.click('#queue-form #sku-queue');
  await retype(page, '#queue-form #sku-risk', '0');
  await modalOK(page);
  // Its sale has started: the queue stays on until the SKU is off sale (409 SALE_IN_PROGRESS).
  await messageText(page, '请先下架.*409 SALE_IN_PROGRESS');
  sku = (await call('GET', '/admin/skus/print-06')).body;
  assert.deepEqual([sku.queue, sku.fairWindowSeconds, sku.riskThreshold], [true, 30, 3], 'the refused change changed nothing');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('#queue-form'), { timeout: 15_000 });
  await (await page.waitForSelector('xpath///tr[.//td[contains(., "print-06")]]//*[@data-action="sale"]')).click();
  await page.waitForSelector('#sale-form');
  await settle(page);
  await page.click('#sale-form label:nth-child(3)'); // off sale
  await modalOK(page);
  await page.waitForSelector('xpath///tr[.//td[contains(., "print-06")]]//*[@data-status="OFF_SALE"]', { timeout: 15_000 });

  await (await page.waitForSelector('xpath///tr[.//td[contains(., "print-06")]]//*[@data-action="queue"]')).click();
  await page.waitForSelector('#queue-form #sku-queue');
  await settle(page);
  await page.click('#queue-form #sku-queue');
  await retype(page, '#queue-form #sku-risk', '0');
  await modalOK(page);
  await page.waitForSelector('xpath///tr[.//td[contains(., "print-06")]]//*[@data-queue="off"]', { timeout: 15_000 });
  sku = (await call('GET', '/admin/skus/print-06')).body;
  assert.deepEqual([sku.queue, sku.fairWindowSeconds, sku.riskThreshold], [false, 0, 0]);
  await page.browserContext().close();
});

test('the operator is refused a restock', async () => {
  const page = await signIn('operator');
  const before = (await call('GET', '/admin/skus/lamp-05')).body.onHand;
  const row = await page.waitForSelector('xpath///tr[.//td[contains(., "lamp-05")]]');
  await (await row.$('[data-action="restock"]')).click();
  await page.waitForSelector('#adjust-units');
  await page.type('#adjust-units', '5');
  await page.type('#adjust-reason', '到货');
  await modalOK(page);
  const text = await messageText(page, 'ROLE_FORBIDDEN');
  assert.match(text, /403 ROLE_FORBIDDEN/);
  await page.screenshot({ path: join(shots, 'operator-refused.png') });
  assert.equal((await call('GET', '/admin/skus/lamp-05')).body.onHand, before, 'nothing restocked');
  await page.browserContext().close();
});

test('a viewer can change nothing', async () => {
  const page = await signIn('viewer');
  await page.waitForSelector('[data-action="restock"]');
  // Every change the console can send, with the viewer's own token, from the page.
  const statuses = await page.evaluate(async (id) => {
    const key = Object.keys(sessionStorage).find((k) => k.startsWith('oidc.user:'));
    const token = JSON.parse(sessionStorage.getItem(key)).access_token;
    const send = (method, path, body) => fetch('/console/api' + path, { method, headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) })
      .then(async (r) => [method + ' ' + path, r.status, (await r.json()).code]);
    return Promise.all([
      send('POST', '/admin/skus', { skuId: 'x-9', name: 'x', price: 100 }),
      send('PATCH', '/admin/skus/lamp-05', { limitPerUser: 5 }),
      send('POST', '/admin/skus/lamp-05/adjustments', { adjustmentId: 'v-1', delta: 5, reason: 'r' }),
      send('PUT', '/admin/skus/lamp-05/shards', { shards: 2 }),
      send('POST', `/admin/orders/${id}/refund`, { restock: true, reason: 'r', refundId: 'v-rf' }),
      send('POST', `/admin/orders/${id}/shipments`, { shipmentId: 'v-p', type: 'express', carrier: 'YTO', tracking: 'YT1' }),
      send('POST', `/admin/orders/${id}/refunds/${id}_R/retry`, { reason: 'r' }),
      send('POST', '/admin/reconcile'),
      send('GET', '/admin/skus/lamp-05'),
    ]);
  }, orderId);
  for (const [route, status, code] of statuses.slice(0, -1)) {
    assert.equal(status, 403, route);
    assert.equal(code, 'ROLE_FORBIDDEN', route);
  }
  assert.equal(statuses.at(-1)[1], 200, 'the viewer reads');
  const sku = (await call('GET', '/admin/skus/lamp-05')).body;
  assert.equal(sku.limitPerUser, 2);
  assert.equal(sku.shards, 1);
  await page.browserContext().close();
});

test("a buyer's token reaches no merchant route", async () => {
  const login = await call('POST', '/auth/wechat', { body: { code: 'test-bob' } });
  assert.equal(login.status, 200);
  const bearer = { Authorization: 'Bearer ' + login.body.token };
  const onConsole = await call('GET', '/console/api/admin/skus', { headers: bearer });
  assert.equal(onConsole.status, 401);
  const onIAM = await call('GET', '/admin/skus', { headers: bearer });
  assert.equal(onIAM.status, 403);
});
