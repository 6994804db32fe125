'use strict';
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { fakeWx, openPage, settle, text, texts, attr, tap, json, signedIn } = require('../harness.js');

const paid = (over) => ({
  orderId: 'o123456', status: 'PAID',
  items: [{ skuId: 'cup-01', qty: 2, unitPrice: 39900 }, { skuId: 'mug-02', qty: 1, unitPrice: 5000 }], amount: 84800,
  currency: 'CNY', createdAt: '2026-03-01T12:00:00Z', expiresAt: '2026-03-01T12:15:00Z', paidAt: '2026-03-01T12:05:00Z',
  transactionId: 't1', shipping: { status: 'UPLOADED' }, ...over,
});
// The route answers the order, the after-sale REQUESTED in its aftersales.
const requested = (body) => paid({ aftersales: [{ aftersaleId: body.aftersaleId, kind: body.kind, lines: body.lines, reason: body.reason, status: 'REQUESTED', requestedAt: '2026-03-02T08:00:00Z' }] });

/** Opens the after-sale page of the order GET answers. */
async function open(body, routes = {}) {
  const wx = fakeWx({ 'GET /orders/o123456': json(200, body), ...routes }, { storage: signedIn() });
  const { page } = openPage('aftersale', { wx, query: { orderId: 'o123456' } });
  await settle(wx);
  return { page, wx };
}

test('the lines with what is left to refund of each, all of it at first; 退货退款 by default', async () => {
  const { page } = await open(paid({ refunds: [{ refundId: 'r1', lines: [{ skuId: 'cup-01', qty: 1 }], amount: 39900, status: 'REFUNDED' }] }));
  assert.deepEqual(texts(page, '.line-item .title'), ['cup-01', 'mug-02']);
  assert.deepEqual(texts(page, '.qty'), ['1', '1']); // one cup refunded already
  assert.equal(attr(page, '#kind-return', 'type'), 'primary');
  await tap(page, page.querySelectorAll('.more')[0]);
  assert.deepEqual(texts(page, '.qty'), ['1', '1']); // no more than is left
});

test('the request: chosen lines, kind and reason as POST /orders/{orderId}/aftersales, then back to the order', async () => {
  const { page, wx } = await open(paid(), { 'POST /orders/o123456/aftersales': (req) => ({ status: 202, body: requested(req.data) }) });
  await tap(page, page.querySelectorAll('.less')[1]); // no mug
  await tap(page, page.querySelectorAll('.less')[0]); // one cup of two
  await tap(page, '#kind-refund');
  page.instance.typeReason({ detail: { value: '  杯子有裂纹  ' } });
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.equal(posts.length, 1);
  assert.equal(posts[0].path, '/orders/o123456/aftersales');
  const { aftersaleId, ...rest } = posts[0].data;
  assert.match(aftersaleId, /^[\x21-\x7e]{1,54}$/); // its refund's refundId is aftersale-<aftersaleId>, at most 64
  assert.deepEqual(rest, { kind: 'refund', lines: [{ skuId: 'cup-01', qty: 1 }], reason: '杯子有裂纹' });
  assert.deepEqual(wx.navigations, [{ how: 'redirectTo', url: '/pages/order/index?orderId=o123456' }]);
});

test('nothing chosen, or no reason: said so, nothing sent', async () => {
  const { page, wx } = await open(paid({ items: [{ skuId: 'cup-01', qty: 1, unitPrice: 39900 }], amount: 39900 }));
  await tap(page, '#submit');
  assert.equal(text(page, '#error'), '请填写原因');
  page.instance.typeReason({ detail: { value: '不想要了' } });
  await tap(page, '.less');
  await tap(page, '#submit');
  assert.equal(text(page, '#error'), '请选择要售后的商品');
  assert.equal(wx.requests.filter((r) => r.method === 'POST').length, 0);
});

test('a lost answer, then the same tap: the same aftersaleId; REFUND_EXCEEDS_PAID: the message, what is left read again, a new id next', async () => {
  let n = 0;
  const { page, wx } = await open(paid(), {
    'POST /orders/o123456/aftersales': (req) => {
      n++;
      if (n === 1) throw { errMsg: 'request:fail timeout' };
      if (n === 2) return { status: 409, body: { code: 'REFUND_EXCEEDS_PAID', message: 'exceeds' } };
      return { status: 202, body: requested(req.data) };
    },
  });
  page.instance.typeReason({ detail: { value: '坏了' } });
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(text(page, '#error'), '无法连接到商城，请检查网络后重试。');
  await tap(page, '#submit');
  await settle(wx);
  assert.equal(text(page, '#error'), '超出可退的数量：已付款的部分已经退过了。');
  assert.equal(wx.requests.filter((r) => r.method === 'GET').length, 2);
  await tap(page, '#submit');
  await settle(wx);
  const ids = wx.requests.filter((r) => r.method === 'POST').map((r) => r.data.aftersaleId);
  assert.equal(ids.length, 3);
  assert.equal(ids[0], ids[1]);
  assert.notEqual(ids[1], ids[2]);
  assert.equal(wx.navigations.length, 1);
});

test('a changed request is a new one: a new aftersaleId', async () => {
  const { page, wx } = await open(paid(), { 'POST /orders/o123456/aftersales': () => { throw { errMsg: 'request:fail timeout' }; } });
  page.instance.typeReason({ detail: { value: '坏了' } });
  await tap(page, '#submit');
  await settle(wx);
  await tap(page, '#kind-refund');
  await tap(page, '#submit');
  await settle(wx);
  const posts = wx.requests.filter((r) => r.method === 'POST');
  assert.deepEqual(posts.map((r) => r.data.kind), ['return-refund', 'refund']);
  assert.notEqual(posts[0].data.aftersaleId, posts[1].data.aftersaleId);
});
