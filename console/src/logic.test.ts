import { afterEach, describe, expect, it, vi } from 'vitest';
import { createInstance } from 'i18next';
import { may, roleOf } from './auth';
import { rates } from './pages/LiveSale';
import { aftersaleSteps, Api, newKey, yuan, type Sku } from './api';
import { receiptText } from './pages/Orders';
import { queueBody } from './pages/Skus';
import zhCN from './locales/zh-CN';
import enUS from './locales/en-US';

const token = (claims: object) => 'h.' + btoa(JSON.stringify(claims)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_') + '.s';

describe('roleOf', () => {
  it('takes the highest staff group of cognito:groups', () => {
    expect(roleOf(token({ 'cognito:groups': ['viewer', 'owner'] }))).toBe('owner');
    expect(roleOf(token({ 'cognito:groups': ['operator'] }))).toBe('operator');
    expect(roleOf(token({ 'cognito:groups': ['buyers'] }))).toBe('none');
    expect(roleOf(token({ sub: 'o-alice' }))).toBe('none');
    expect(roleOf('not a token')).toBe('none');
  });
  it('orders roles', () => {
    expect(may('owner', 'operator')).toBe(true);
    expect(may('operator', 'owner')).toBe(false);
    expect(may('viewer', 'viewer')).toBe(true);
    expect(may('none', 'none')).toBe(false);
  });
});

describe('rates', () => {
  const sku = (available: number, onHand: number): Sku => ({ skuId: 'cup', name: 'cup', price: 1, currency: 'CNY', onSale: true, status: 'ON_SALE', limitPerUser: 0, shards: 1, available, onHand, reserved: onHand - available });
  it('reads units ordered and sold between two readings', () => {
    // 3 s: 6 units taken from available, 3 of them paid (left on-hand).
    expect(rates(sku(30, 30), sku(24, 27), 3, 5)).toEqual({ ordered: 2, sold: 1, soldSince: 8 });
  });
  it('says nothing before a second reading, and never counts a restock as negative', () => {
    expect(rates(undefined, sku(30, 30), 3, 0)).toEqual({ ordered: 0, sold: 0, soldSince: 0 });
    expect(rates(sku(10, 10), sku(40, 40), 3, 2)).toEqual({ ordered: 0, sold: 0, soldSince: 2 });
  });
});

describe('formats', () => {
  it('shows fen as yuan and makes keys the contract takes', () => {
    expect(yuan(39900)).toBe('¥399.00');
    expect(yuan(5)).toBe('¥0.05');
    const k = newKey('restock');
    expect(k).toMatch(/^restock-[0-9a-f]{16}$/);
    expect(newKey('restock')).not.toBe(k);
  });
});

describe('queueBody', () => {
  it('sends the three waiting-room fields, a fair window only with the queue', () => {
    expect(queueBody({ queue: true, fairWindowSeconds: 30, riskThreshold: 3 })).toEqual({ queue: true, fairWindowSeconds: 30, riskThreshold: 3 });
    expect(queueBody({ queue: false, fairWindowSeconds: 30, riskThreshold: 2 })).toEqual({ queue: false, fairWindowSeconds: 0, riskThreshold: 2 });
    expect(queueBody({})).toEqual({ queue: false, fairWindowSeconds: 0, riskThreshold: 0 });
  });
});

describe('locales', () => {
  const keys = (o: object, p = ''): string[] => Object.entries(o).flatMap(([k, v]) => (typeof v === 'object' ? keys(v, p + k + '.') : [p + k]));
  it('English has every Chinese key and no other', () => {
    expect(keys(enUS).sort()).toEqual(keys(zhCN).sort());
  });
});

describe('after-sales', () => {
  it('offers approve and reject on a request, received or reject on an approved return only', () => {
    expect(aftersaleSteps({ kind: 'refund', status: 'REQUESTED' })).toEqual(['approve', 'reject']);
    expect(aftersaleSteps({ kind: 'return-refund', status: 'REQUESTED' })).toEqual(['approve', 'reject']);
    expect(aftersaleSteps({ kind: 'return-refund', status: 'APPROVED' })).toEqual(['received', 'reject']);
    expect(aftersaleSteps({ kind: 'refund', status: 'APPROVED' })).toEqual([]);
    for (const status of ['REJECTED', 'REFUNDING', 'REFUNDED'] as const) {
      expect(aftersaleSteps({ kind: 'return-refund', status })).toEqual([]);
    }
  });

  afterEach(() => vi.unstubAllGlobals());
  it('calls the merchant API route of each step, a reason only with reject', async () => {
    const calls: { url: string; method?: string; body?: unknown }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      calls.push({ url, method: init.method, body: init.body });
      return new Response('{"orderId":"o 1"}', { status: 200 });
    });
    const api = new Api('/console/api', () => 'tok', () => {});
    await api.aftersale('o 1', 'as/1', 'approve');
    await api.aftersale('o 1', 'as-2', 'reject', 'worn');
    await api.aftersale('o 1', 'as-3', 'received');
    expect(calls).toEqual([
      { url: '/console/api/admin/orders/o%201/aftersales/as%2F1/approve', method: 'POST', body: undefined },
      { url: '/console/api/admin/orders/o%201/aftersales/as-2/reject', method: 'POST', body: '{"reason":"worn"}' },
      { url: '/console/api/admin/orders/o%201/aftersales/as-3/received', method: 'POST', body: undefined },
    ]);
  });
});

describe('receiptText', () => {
  it('shows the receipt, with when and by whom once confirmed', async () => {
    const i18n = createInstance();
    await i18n.init({ showSupportNotice: false, lng: 'en-US', resources: { 'en-US': { translation: enUS } } });
    expect(receiptText({ status: 'WAITING' }, i18n.t, 'en-US')).toBe('Waiting for the buyer');
    const s = receiptText({ status: 'CONFIRMED', confirmedAt: '2026-01-05T00:00:00Z', method: 'auto' }, i18n.t, 'en-US');
    expect(s).toMatch(/^Confirmed · .*2026.* · by WeChat \(auto\)$/);
  });
});
