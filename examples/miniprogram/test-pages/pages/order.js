'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, el, text, texts, tap, json, signedIn } = require('../harness.js');

const order = (over) => ({
  orderId: 'o123456', status: 'PENDING', items: [{ skuId: 'cup-01', qty: 2, unitPrice: 39900 }], amount: 79800,
  currency: 'CNY', createdAt: '2026-03-01T12:00:00Z', expiresAt: '2026-03-01T12:15:00Z', ...over,
});
const paid = (over) => order({ status: 'PAID', paidAt: '2026-03-01T12:05:00Z', transactionId: 't1', ...over });

/** The buttons the page shows, by id. */
function buttons(page) {
  return ['#pay', '#cancel', '#confirm', '#refund', '#aftersale'].filter((id) => el(page, id));
}

/** Renders the detail of the order that GET answers, at nowIso. */
async function detail(t, body, { nowIso = '2026-03-01T12:10:00Z', refundWindowSeconds = 0, routes = {}, modal } = {}) {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse(nowIso) });
  const wx = fakeWx({ 'GET /orders/o123456': json(200, body), ...routes }, { storage: signedIn(), modal });
  const { page } = openPage('order', { wx, query: { orderId: 'o123456' }, refundWindowSeconds });
  await settle(wx);
  return { page, wx };
}

test('PENDING: Pay and Cancel, no Refund', async (t) => {
  const { page, wx } = await detail(t, order());
  assert.deepEqual(buttons(page), ['#pay', '#cancel']);
  assert.equal(text(page, '#status'), '待付款');
  assert.equal(text(page, '#amount'), '¥798.00');
  await tap(page, '#pay');
  assert.deepEqual(wx.navigations, [{ how: 'navigateTo', url: '/pages/pay/index?orderId=o123456' }]);
});

test('PENDING past its expiresAt: Cancel only', async (t) => {
  const { page } = await detail(t, order(), { nowIso: '2026-03-01T12:16:00Z' });
  assert.deepEqual(buttons(page), ['#cancel']);
});

test('PAID and the shop allows no buyer refunds (window 0): 申请售后 only', async (t) => {
  const { page } = await detail(t, paid(), { refundWindowSeconds: 0 });
  assert.deepEqual(buttons(page), ['#aftersale']);
  assert.equal(text(page, '#status'), '已付款');
});

test('PAID within the refund window: Refund; confirmed, POST /refund and the REFUNDING order shown', async (t) => {
  const { page, wx } = await detail(t, paid(), {
    refundWindowSeconds: 3600,
    routes: { 'POST /orders/o123456/refund': json(202, paid({ status: 'REFUNDING' })) },
  });
  assert.deepEqual(buttons(page), ['#refund', '#aftersale']);
  await tap(page, '#refund');
  await settle(wx);
  assert.deepEqual(wx.modals, [{ title: '退款？', content: '¥798.00 将退回你的微信支付。' }]);
  assert.equal(wx.requests.at(-1).method, 'POST');
  assert.equal(wx.requests.at(-1).path, '/orders/o123456/refund');
  assert.equal(text(page, '#status'), '退款中');
  assert.deepEqual(buttons(page), []);
});

test('PAID after the refund window: no Refund, 申请售后 instead', async (t) => {
  const { page } = await detail(t, paid(), { refundWindowSeconds: 3600, nowIso: '2026-03-01T13:05:01Z' });
  assert.deepEqual(buttons(page), ['#aftersale']);
});

test('partly refunded: the refunds and the amount back are listed; Refund offers what is left', async (t) => {
  const body = paid({
    refundedAmount: 39900,
    refunds: [{ refundId: 'r1', outRefundNo: 'o123456_R', lines: [{ skuId: 'cup-01', qty: 1 }], amount: 39900, status: 'REFUNDED', refundedAt: '2026-03-01T12:08:00Z' }],
  });
  const { page, wx } = await detail(t, body, { refundWindowSeconds: 3600, modal: false });
  assert.equal(text(page, '#refunded'), '¥399.00');
  assert.deepEqual(texts(page, '.refund').map((s) => s.replace(/ \d{4}-.*$/, '')), ['退款 ¥399.00：已退款']);
  assert.deepEqual(buttons(page), ['#refund', '#aftersale']);
  await tap(page, '#refund');
  await settle(wx);
  assert.equal(wx.modals[0].content, '¥399.00 将退回你的微信支付。');
  assert.equal(wx.requests.length, 1); // declined: nothing sent
});

test('refunds under way cover everything paid: no Refund', async (t) => {
  const refunds = [{ refundId: 'all', outRefundNo: 'o123456_R', lines: [{ skuId: 'cup-01', qty: 2 }], amount: 79800, status: 'REFUNDING' }];
  const { page } = await detail(t, paid({ refunds }), { refundWindowSeconds: 3600 });
  assert.deepEqual(buttons(page), []);
});

test('REFUNDED and CANCELLED: no buttons', async (t) => {
  const refundedOrder = paid({
    status: 'REFUNDED', refundedAt: '2026-03-01T12:09:00Z', refundAmount: 79800, refundedAmount: 79800,
    refunds: [{ refundId: 'all', outRefundNo: 'o123456_R', lines: [{ skuId: 'cup-01', qty: 2 }], amount: 79800, status: 'REFUNDED', refundedAt: '2026-03-01T12:09:00Z' }],
  });
  let { page } = await detail(t, refundedOrder, { refundWindowSeconds: 3600 });
  assert.deepEqual(buttons(page), []);
  assert.equal(text(page, '#refunded'), '¥798.00');
  t.mock.timers.reset();
  ({ page } = await detail(t, order({ status: 'CANCELLED', cancelReason: 'USER' })));
  assert.deepEqual(buttons(page), []);
});

test('Cancel: declined sends nothing; confirmed sends POST /cancel and shows CANCELLED', async (t) => {
  const cancelled = order({ status: 'CANCELLED', cancelReason: 'USER', cancelledAt: '2026-03-01T12:10:00Z' });
  const { page, wx } = await detail(t, order(), { routes: { 'POST /orders/o123456/cancel': json(200, cancelled) } });
  wx.showModal = () => Promise.resolve({ confirm: false, cancel: true });
  await tap(page, '#cancel');
  await settle(wx);
  assert.equal(wx.requests.length, 1);
  wx.showModal = () => Promise.resolve({ confirm: true, cancel: false });
  await tap(page, '#cancel');
  await settle(wx);
  assert.deepEqual(wx.requests.map((r) => `${r.method} ${r.path}`), ['GET /orders/o123456', 'POST /orders/o123456/cancel']);
  assert.equal(text(page, '#status'), '已取消');
  assert.deepEqual(buttons(page), []);
});

test('Cancel refused because it was paid meanwhile: the message, and the order read again', async (t) => {
  let reads = 0;
  const { page, wx } = await detail(t, order(), {
    routes: {
      'GET /orders/o123456': () => ({ status: 200, body: ++reads === 1 ? order() : paid() }),
      'POST /orders/o123456/cancel': json(409, { code: 'ORDER_NOT_CANCELLABLE', message: 'paid' }),
    },
  });
  await tap(page, '#cancel');
  await settle(wx);
  assert.equal(text(page, '#error'), '该订单已付款，无法取消。');
  assert.equal(text(page, '#status'), '已付款');
  assert.deepEqual(buttons(page), ['#aftersale']);
});

const home = {
  userName: '张三', telNumber: '18912341234', provinceName: '广东省', cityName: '广州市',
  countyName: '海珠区', detailInfo: '新港中路397号',
};
const shipped = (over) => paid({
  address: home,
  shipping: { status: 'UPLOADED', uploadedAt: '2026-03-01T13:00:00Z' },
  shipments: [
    { shipmentId: 'sh1', type: 'express', carrier: 'SF', tracking: 'SF1234567890', items: [{ skuId: 'cup-01', qty: 1 }], uploadedAt: '2026-03-01T13:00:00Z' },
    { shipmentId: 'sh2', type: 'express', carrier: 'ZTO', tracking: '7500000001', items: [{ skuId: 'cup-01', qty: 1 }] },
  ],
  ...over,
});

test('shipped: the address, each parcel (carrier, tracking, what is in it), 确认收货 and 申请售后; no Refund even within the window', async (t) => {
  const { page } = await detail(t, shipped(), { refundWindowSeconds: 3600 });
  assert.equal(text(page, '#who'), '张三 18912341234');
  assert.equal(text(page, '#where'), '广东省广州市海珠区新港中路397号');
  assert.deepEqual(texts(page, '.shipment .parcel'), ['SF SF1234567890', 'ZTO 7500000001']);
  assert.deepEqual(texts(page, '.shipment').map((s) => s.replace(/发货时间 \d{4}-\d\d-\d\d \d\d:00$/, '')), ['快递SF SF1234567890cup-01 × 1', '快递ZTO 7500000001cup-01 × 1']);
  assert.equal(text(page, '#receipt'), '');
  assert.deepEqual(buttons(page), ['#confirm', '#aftersale']);
});

test('确认收货 opens WeChat\'s confirm-receipt component with the transaction id, then shows the API\'s receipt', async (t) => {
  let reads = 0;
  const { page, wx } = await detail(t, shipped(), {
    routes: {
      'GET /orders/o123456': () => ({
        status: 200,
        body: ++reads === 1 ? shipped() : shipped({ receipt: { status: 'CONFIRMED', confirmedAt: '2026-03-01T12:11:00Z' } }),
      }),
    },
  });
  await tap(page, '#confirm');
  await settle(wx);
  assert.deepEqual(wx.businessViews, [{ businessType: 'weappOrderConfirm', extraData: { transaction_id: 't1' } }]);
  assert.equal(reads, 2);
  assert.match(text(page, '#receipt'), /^已于 2026-03-01 \d\d:11 确认收货$/);
  assert.deepEqual(buttons(page), ['#aftersale']);
});

test('the component says success but the API has no receipt yet: the button stays, nothing is claimed', async (t) => {
  const { page, wx } = await detail(t, shipped());
  await tap(page, '#confirm');
  await settle(wx);
  assert.equal(wx.businessViews.length, 1);
  assert.equal(text(page, '#receipt'), '');
  assert.deepEqual(buttons(page), ['#confirm', '#aftersale']);
});

test('a WeChat without openBusinessView: asked to update, nothing opened', async (t) => {
  const { page, wx } = await detail(t, shipped());
  delete wx.openBusinessView;
  await tap(page, '#confirm');
  assert.equal(text(page, '#error'), '请升级微信到最新版本后再确认收货。');
});

test('shipping still being uploaded (QUEUED): the parcel shown, no 确认收货 yet (WeChat does not hold it)', async (t) => {
  const { page } = await detail(t, shipped({ shipping: { status: 'QUEUED' } }));
  assert.equal(texts(page, '.shipment').length, 2);
  assert.deepEqual(buttons(page), ['#aftersale']);
});

test('申请售后 opens the after-sale page; the requests made are listed', async (t) => {
  const { page, wx } = await detail(t, shipped({ aftersales: [{ aftersaleId: 'as1', kind: 'return-refund', status: 'REQUESTED' }] }));
  assert.deepEqual(texts(page, '.aftersale'), ['售后 退货退款：待商家处理']);
  await tap(page, '#aftersale');
  assert.deepEqual(wx.navigations, [{ how: 'navigateTo', url: '/pages/aftersale/index?orderId=o123456' }]);
});

test('更换 the address: WeChat\'s picker, then PUT with its answer as it is (wx.request sends no PATCH), and the order it answers', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-03-01T12:10:00Z') });
  const moved = { ...home, detailInfo: '阅江西路222号', streetName: '新港街道' };
  const wx = fakeWx({
    'GET /orders/o123456': json(200, paid({ address: home })),
    'PUT /orders/o123456/address': (req) => ({ status: 200, body: paid({ address: { ...moved, userName: req.data.userName } }) }),
  }, { storage: signedIn(), address: [moved] });
  const { page } = openPage('order', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  assert.equal(text(page, '#change-address'), '更换');
  await tap(page, '#change-address');
  await settle(wx);
  const put = wx.requests.at(-1);
  assert.equal(put.method, 'PUT');
  assert.equal(put.path, '/orders/o123456/address');
  assert.deepEqual(put.data, { ...moved, nationalCode: '156', errMsg: 'chooseAddress:ok' }); // the picker's answer as it is
  assert.equal(text(page, '#where'), '广东省广州市海珠区阅江西路222号');
  assert.equal(text(page, '#error'), '');
});

test('更换: the picker closed changes nothing', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-03-01T12:10:00Z') });
  const wx = fakeWx({ 'GET /orders/o123456': json(200, order({ address: home })) }, { storage: signedIn(), address: ['cancel'] });
  const { page } = openPage('order', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  await tap(page, '#change-address');
  await settle(wx);
  assert.deepEqual(wx.requests.map((r) => r.method), ['GET']);
  assert.equal(text(page, '#error'), '');
});

for (const [name, body] of [
  ['shipped', shipped()], ['shipping queued', paid({ address: home, shipping: { status: 'QUEUED' } })],
  ['cancelled', order({ status: 'CANCELLED', address: home })], ['without an address', paid()],
]) {
  test(`no 更换 for an order ${name}`, async (t) => {
    const { page } = await detail(t, body);
    assert.equal(el(page, '#change-address'), undefined);
  });
}

test('更换 refused because the order shipped meanwhile: the message, and the order read again', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-03-01T12:10:00Z') });
  let reads = 0;
  const wx = fakeWx({
    'GET /orders/o123456': () => ({ status: 200, body: ++reads === 1 ? paid({ address: home }) : shipped() }),
    'PUT /orders/o123456/address': json(409, { code: 'ADDRESS_LOCKED', message: 'locked' }),
  }, { storage: signedIn(), address: [home] });
  const { page } = openPage('order', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  await tap(page, '#change-address');
  await settle(wx);
  assert.equal(text(page, '#error'), '订单已发货或已关闭，收货地址无法再修改。');
  assert.equal(el(page, '#change-address'), undefined);
});
