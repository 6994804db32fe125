// What the pages show, computed from the API's answers: money in yuan, countdowns, which
// buttons a buyer may press (by the API's rules in tools/internal/openapi/openapi.yaml) and a
// plain message for each refusal. No wx calls, so it runs under node as it is.
'use strict';
const { ApiError, RequestError } = require('./api.js');

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
  if (sku.status === 'OFF_SALE') return 'Not on sale';
  if (sku.status === 'SOLD_OUT' || sku.available <= 0) return 'Sold out';
  if (sku.status === 'UPCOMING' && !canBuy(sku, nowMs)) return `${sku.available} for sale soon`;
  if (sku.status === 'LOW_STOCK') return `Only ${sku.available} left`;
  return `${sku.available} left`;
}

/** @type {Record<OrderStatus, string>} */
const STATUS_TEXT = {
  PENDING: 'Awaiting payment',
  PAID: 'Paid',
  CANCELLED: 'Cancelled',
  REFUND_PENDING: 'Paid; the shop owes a refund',
  REFUNDING: 'Refund under way',
  REFUNDED: 'Refunded',
};

/**
 * @param {OrderStatus} status
 * @returns {string}
 */
function statusText(status) {
  return STATUS_TEXT[status] || status;
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
 * 0, the default, means never: only the shop refunds).
 * @param {Order} order
 * @param {number} nowMs
 * @param {number} windowSeconds
 * @returns {boolean}
 */
function canRefund(order, nowMs, windowSeconds) {
  if (order.status !== 'PAID' || windowSeconds <= 0 || !order.paidAt) return false;
  if (refunded(order) >= order.amount) return false;
  const paidAt = Date.parse(order.paidAt);
  return !Number.isNaN(paidAt) && nowMs < paidAt + windowSeconds * 1000;
}

/** @type {Record<string, string>} */
const MESSAGES = {
  STOCK_OUT: 'Sold out: not enough left for this quantity.',
  LIMIT_EXCEEDED: 'You have reached the purchase limit for this item.',
  SALE_NOT_STARTED: 'The sale has not started yet.',
  SKU_OFF_SALE: 'This item is no longer on sale.',
  SKU_NOT_FOUND: 'This item does not exist.',
  CART_TOO_LARGE: 'Too many items in one order; please order fewer.',
  IDEMPOTENCY_KEY_REUSED: 'This order changed while it was being sent; please try again.',
  ORDER_NOT_PAYABLE: 'This order can no longer be paid.',
  ORDER_NOT_CANCELLABLE: 'This order is paid and can no longer be cancelled.',
  ORDER_NOT_FOUND: 'Order not found.',
  REFUND_NOT_ALLOWED: 'This order can no longer be refunded here; please contact the shop.',
  REFUND_EXCEEDS_PAID: 'Everything paid has already been refunded.',
  PAYMENT_REFUSED: 'WeChat Pay refused this payment.',
};

/**
 * messageFor is what a page shows when a call failed.
 * @param {unknown} err
 * @returns {string}
 */
function messageFor(err) {
  if (err instanceof ApiError) {
    if (err.statusCode === 429 || err.statusCode === 503) {
      const wait = err.retryAfter ? ` in ${err.retryAfter} s` : ' in a moment';
      return `The shop is very busy; please try again${wait}.`;
    }
    if (err.statusCode === 401) return 'Could not sign you in; please try again.';
    return MESSAGES[err.code] || err.message;
  }
  if (err instanceof RequestError) return 'No connection to the shop; check the network and try again.';
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
  yuan, msUntil, countdown, when, canBuy, stockNote, statusText, refunded, canPay, canCancel,
  canRefund, messageFor, definitive, cancelledByBuyer,
};
