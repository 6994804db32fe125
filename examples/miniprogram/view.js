// What the pages show, computed from the API's answers: money in yuan, countdowns, which
// buttons a buyer may press (by the API's rules in tools/internal/openapi/openapi.yaml) and a
// plain message for each refusal. No wx calls, so it runs under node as it is.
'use strict';
const { ApiError, RequestError } = require('./api.js');
const { t, has } = require('./i18n.js');

/**
 * @typedef {import('./api.js').Sku} Sku
 * @typedef {import('./api.js').Order} Order
 * @typedef {import('./api.js').OrderStatus} OrderStatus
 */

/**
 * yuan renders fen as yuan with two decimals: 39900 → "399.00".
 * @param {number} fen
 * @returns {string}
 */
function yuan(fen) {
  return (fen / 100).toFixed(2);
}

/**
 * msUntil: milliseconds from nowMs to an RFC 3339 time, 0 once it has passed or when
 * the time is absent or unreadable.
 * @param {string | undefined} time
 * @param {number} nowMs
 * @returns {number}
 */
function msUntil(time, nowMs) {
  const at = time ? Date.parse(time) : NaN;
  return Number.isNaN(at) ? 0 : Math.max(0, at - nowMs);
}

/**
 * countdown renders a wait as "mm:ss", "h:mm:ss" or "Nd h:mm:ss", rounding up to the
 * second so that "00:00" shows only once the time has come.
 * @param {number} ms
 * @returns {string}
 */
function countdown(ms) {
  let s = Math.ceil(ms / 1000);
  const days = Math.floor(s / 86400);
  s -= days * 86400;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const two = (/** @type {number} */ n) => String(n).padStart(2, '0');
  const clock = h > 0 || days > 0 ? `${h}:${two(m)}:${two(sec)}` : `${two(m)}:${two(sec)}`;
  return days > 0 ? `${days}d ${clock}` : clock;
}

/**
 * when renders an RFC 3339 time in the phone's time zone: "2026-03-01 20:00".
 * @param {string} time
 * @returns {string}
 */
function when(time) {
  const d = new Date(time);
  if (Number.isNaN(d.getTime())) return '';
  const two = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

/**
 * canBuy: whether the buy button is live for a SKU. Never when SOLD_OUT or OFF_SALE or
 * nothing is available; an UPCOMING SKU only once its saleStartsAt has come (the page
 * counts down to it); ON_SALE and LOW_STOCK when available > 0.
 * @param {Sku} sku
 * @param {number} nowMs the API's clock (api.now())
 * @returns {boolean}
 */
function canBuy(sku, nowMs) {
  if (sku.available <= 0) return false;
  switch (sku.status) {
    case 'ON_SALE':
    case 'LOW_STOCK':
      return true;
    case 'UPCOMING':
      return !!sku.saleStartsAt && msUntil(sku.saleStartsAt, nowMs) === 0;
    default:
      return false;
  }
}

/**
 * stockNote is the line under a SKU's price: how many are left as the API says (never
 * more), or why it cannot be bought.
 * @param {Sku} sku
 * @param {number} nowMs the API's clock (api.now())
 * @returns {string}
 */
function stockNote(sku, nowMs) {
  if (sku.status === 'OFF_SALE') return t('notOnSale');
  if (sku.status === 'SOLD_OUT' || sku.available <= 0) return t('soldOut');
  if (sku.status === 'UPCOMING' && !canBuy(sku, nowMs)) return t('soonForSale', { n: sku.available });
  if (sku.status === 'LOW_STOCK') return t('onlyLeft', { n: sku.available });
  return t('left', { n: sku.available });
}

/**
 * ticketNote: what the waiting screen says of a ticket (api.js Ticket): status, the place
 * in line and the wait ('' when the API has not placed the ticket yet), for an ADMITTED
 * ticket the time left to order on the API's clock.
 * @param {import('./api.js').Ticket} ticket
 * @param {number} nowMs the API's clock (api.now())
 * @returns {{ status: string, position: string, wait: string }}
 */
function ticketNote(ticket, nowMs) {
  switch (ticket.status) {
    case 'WAITING': {
      const placed = typeof ticket.position === 'number';
      const wait = typeof ticket.estimatedWaitSeconds === 'number' ? ticket.estimatedWaitSeconds : null;
      return {
        status: placed ? '' : t('queuePlacing'),
        position: placed ? t('queuePosition', { n: Number(ticket.position) }) : '',
        wait: wait !== null ? t('queueWait', { time: countdown(wait * 1000) }) : '',
      };
    }
    case 'ADMITTED':
      return { status: t('queueAdmitted', { time: countdown(msUntil(ticket.admissionExpiresAt, nowMs)) }), position: '', wait: '' };
    case 'SOLD_OUT':
      return { status: t('queueSoldOut'), position: '', wait: '' };
    default:
      return { status: t('queueExpired'), position: '', wait: '' };
  }
}

/**
 * waitlistNote: what the SKU page says of the buyer's waitlist entry (api.js
 * WaitlistEntry); a HELD entry with the units and the time left on the API's clock.
 * @param {import('./api.js').WaitlistEntry} entry
 * @param {number} nowMs the API's clock (api.now())
 * @returns {string}
 */
function waitlistNote(entry, nowMs) {
  if (entry.status === 'HELD') {
    return t('waitlistHELD', { n: entry.quantity || 1, time: countdown(msUntil(entry.holdExpiresAt || undefined, nowMs)) });
  }
  return has(`waitlist${entry.status}`) ? t(`waitlist${entry.status}`) : entry.status;
}

/**
 * statusText: the order status in the buyer's words.
 * @param {OrderStatus} status
 * @returns {string}
 */
function statusText(status) {
  return has(`status${status}`) ? t(`status${status}`) : status;
}

/**
 * refunded: fen no longer left to refund, the sum of the order's refunds, done or
 * under way (each listed with its status).
 * @param {Order} order
 * @returns {number}
 */
function refunded(order) {
  return (order.refunds || []).reduce((sum, r) => sum + r.amount, 0);
}

/**
 * canPay: PENDING and before its expiresAt.
 * @param {Order} order
 * @param {number} nowMs
 * @returns {boolean}
 */
function canPay(order, nowMs) {
  return order.status === 'PENDING' && msUntil(order.expiresAt, nowMs) > 0;
}

/**
 * canCancel: only a PENDING order may be cancelled by its buyer.
 * @param {Order} order
 * @returns {boolean}
 */
function canCancel(order) {
  return order.status === 'PENDING';
}

/**
 * canRefund: the buyer may refund a PAID order with something left to refund, within
 * the shop's refund window after paidAt (the UserRefundWindow template parameter;
 * 0, the default, means never: only the shop refunds), and never once something has
 * shipped (the API answers REFUND_NOT_ALLOWED: that is an after-sale then).
 * @param {Order} order
 * @param {number} nowMs
 * @param {number} windowSeconds
 * @returns {boolean}
 */
function canRefund(order, nowMs, windowSeconds) {
  if (order.status !== 'PAID' || windowSeconds <= 0 || !order.paidAt || shipped(order)) return false;
  if (refunded(order) >= order.amount) return false;
  const paidAt = Date.parse(order.paidAt);
  return !Number.isNaN(paidAt) && nowMs < paidAt + windowSeconds * 1000;
}

/**
 * shipped: the shop has sent something (a shipment recorded, being uploaded to WeChat or
 * uploaded; not one refused for good or cancelled).
 * @param {Order} order
 * @returns {boolean}
 */
function shipped(order) {
  if (order.shipments && order.shipments.length > 0) return true;
  return !!order.shipping && (order.shipping.status === 'QUEUED' || order.shipping.status === 'UPLOADED');
}

/**
 * receiptState: the API's receipt state ('CONFIRMED' once the buyer, or WeChat
 * automatically, confirmed receipt), '' when it says none.
 * @param {Order} order
 * @returns {string}
 */
function receiptState(order) {
  return order.receipt ? order.receipt.status : '';
}

/**
 * The order tabs of the list, in order: 全部 / 待付款 / 待发货 / 待收货 / 售后.
 * @typedef {'all' | 'pending' | 'toShip' | 'toReceive' | 'aftersale'} Tab
 * @type {Tab[]}
 */
const TABS = ['all', 'pending', 'toShip', 'toReceive', 'aftersale'];

/**
 * inTab: whether the order belongs under a tab, by the order states of docs/contract.md:
 * pending = PENDING; toShip = PAID with nothing shipped; toReceive = PAID, shipped, receipt
 * not confirmed; aftersale = money going or gone back (REFUND_PENDING, REFUNDING,
 * REFUNDED) or any refund or after-sale request on it. CANCELLED orders and received ones
 * are under all only.
 * @param {Order} order
 * @param {Tab} tab
 * @returns {boolean}
 */
function inTab(order, tab) {
  switch (tab) {
    case 'pending':
      return order.status === 'PENDING';
    case 'toShip':
      return order.status === 'PAID' && !shipped(order);
    case 'toReceive':
      return order.status === 'PAID' && shipped(order) && receiptState(order) !== 'CONFIRMED';
    case 'aftersale':
      return ['REFUND_PENDING', 'REFUNDING', 'REFUNDED'].includes(order.status) ||
        (order.refunds || []).length > 0 || (order.aftersales || []).length > 0;
    default:
      return true;
  }
}

/**
 * canChangeAddress: the buyer may change the delivery address of a PENDING or PAID order
 * that has one and of which nothing has shipped (the API's rule: PUT
 * /orders/{orderId}/address answers 409 ADDRESS_LOCKED after the first shipment).
 * @param {Order} order
 * @returns {boolean}
 */
function canChangeAddress(order) {
  return (order.status === 'PENDING' || order.status === 'PAID') && !!order.address && !order.shipping &&
    !(order.shipments && order.shipments.length > 0);
}

/**
 * canConfirmReceipt: the confirm-receipt button (WeChat's confirm-receipt component,
 * opened with the transaction id) shows for a PAID order whose shipping WeChat holds
 * (UPLOADED: the component finds no order before that), not yet confirmed.
 * @param {Order} order
 * @returns {boolean}
 */
function canConfirmReceipt(order) {
  return order.status === 'PAID' && !!order.transactionId && !!order.shipping &&
    order.shipping.status === 'UPLOADED' && receiptState(order) !== 'CONFIRMED';
}

/**
 * refundableLines: per line, the units not refunded yet (the order's items less every
 * refund's lines; a refund without lines covers the whole order).
 * @param {Order} order
 * @returns {{ skuId: string, qty: number, unitPrice: number }[]}
 */
function refundableLines(order) {
  /** @type {Record<string, number>} */
  const back = {};
  let all = false;
  for (const r of order.refunds || []) {
    if (!r.lines) all = true;
    for (const l of r.lines || []) back[l.skuId] = (back[l.skuId] || 0) + l.qty;
  }
  return order.items.map((it) => ({
    skuId: it.skuId, unitPrice: it.unitPrice, qty: all ? 0 : Math.max(0, it.qty - (back[it.skuId] || 0)),
  }));
}

/**
 * canAftersale: a PAID order with something left to refund may get an after-sale request.
 * @param {Order} order
 * @returns {boolean}
 */
function canAftersale(order) {
  return order.status === 'PAID' && refundableLines(order).some((l) => l.qty > 0);
}

/**
 * messageFor is what a page shows when a call failed: the API's code in the buyer's
 * words (i18n.js), else its message.
 * @param {unknown} err
 * @returns {string}
 */
function messageFor(err) {
  if (err instanceof ApiError) {
    if (err.statusCode === 429 || err.statusCode === 503) {
      const wait = err.retryAfter ? t('busyIn', { n: err.retryAfter }) : t('busyMoment');
      return t('busy', { wait });
    }
    if (err.statusCode === 401) return t('signInFailed');
    if (err.code === 'INVALID_REQUEST') return t('INVALID_REQUEST', { message: err.message });
    return err.code && has(err.code) ? t(err.code) : err.message;
  }
  if (err instanceof RequestError) return t('offline');
  if (err && typeof err === 'object' && 'errMsg' in err) return String(err.errMsg);
  return err instanceof Error ? err.message : String(err);
}

/**
 * definitive: the API refused for good (a 4xx other than 401, 408 and 429): a new tap is
 * a new request, while after a lost or busy answer it is the same one again.
 * @param {unknown} err
 * @returns {boolean}
 */
function definitive(err) {
  return err instanceof ApiError && err.statusCode >= 400 && err.statusCode < 500 &&
    ![401, 408, 429].includes(err.statusCode);
}

/**
 * cancelledByBuyer: the buyer closed wx.requestPayment's sheet.
 * @param {unknown} err
 * @returns {boolean}
 */
function cancelledByBuyer(err) {
  return !!err && typeof err === 'object' && 'errMsg' in err && /cancel/.test(String(err.errMsg));
}

module.exports = {
  yuan, msUntil, countdown, when, canBuy, stockNote, ticketNote, waitlistNote, statusText, refunded, canPay, canCancel,
  canRefund, messageFor, definitive, cancelledByBuyer, shipped, receiptState, TABS, inTab,
  canConfirmReceipt, refundableLines, canAftersale, canChangeAddress,
};
