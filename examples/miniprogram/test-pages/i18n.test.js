// The strings: Chinese by default, English as the second locale, the same keys in both.
'use strict';
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const i18n = require('../i18n.js');
const config = require('../config.js');
const { ApiError } = require('../api.js');
const { messageFor, statusText, stockNote } = require('../view.js');

after(() => i18n.setLocale(config.locale));

test('zh_CN is the default locale, and config.js asks for it', () => {
  assert.equal(config.locale, 'zh_CN');
  assert.equal(i18n.DEFAULT_LOCALE, 'zh_CN');
  assert.equal(statusText('PENDING'), '待付款');
  assert.equal(messageFor(new ApiError(409, { code: 'STOCK_OUT', message: 'stock out' }, {}, 0)), '库存不足，无法购买这么多。');
});

test('both locales have the same keys, none empty, with the same {params}', () => {
  const { zh_CN: zh, en } = i18n.TABLES;
  assert.deepEqual(Object.keys(en).sort(), Object.keys(zh).sort());
  const params = (s) => (s.match(/\{\w+\}/g) || []).sort();
  for (const key of Object.keys(zh)) {
    assert.ok(zh[key] && en[key], key);
    assert.deepEqual(params(en[key]), params(zh[key]), key);
  }
});

test('English as the second locale; an unknown locale falls back to zh_CN', () => {
  i18n.setLocale('en');
  assert.equal(statusText('PENDING'), 'Awaiting payment');
  assert.equal(stockNote({ skuId: 'a', name: 'a', price: 1, currency: 'CNY', status: 'LOW_STOCK', available: 2 }, 0), 'Only 2 left');
  assert.equal(messageFor(new ApiError(429, { code: 'RATE_LIMITED' }, { 'Retry-After': '2' }, 0)), 'The shop is very busy; please try again in 2 s.');
  i18n.setLocale('fr');
  assert.equal(statusText('PAID'), '已付款');
});

test('a buyer refused by the scalper check reads why, not the API\'s English', () => {
  assert.equal(messageFor(new ApiError(403, { code: 'RISK_REJECTED', message: 'refused', skuId: 'cup-01' }, {}, 0)), '微信安全评估未通过，无法购买该商品。');
});

test('an API code without a string shows the API\'s own message', () => {
  assert.equal(messageFor(new ApiError(409, { code: 'SOMETHING_NEW', message: 'as the API says' }, {}, 0)), 'as the API says');
});
