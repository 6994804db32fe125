// The cart: the lines the buyer gathered ({skuId, qty}, in the order added), kept in the
// phone's storage (wx.setStorageSync) so that it outlives the run. The API holds no cart:
// the whole cart becomes one POST /orders, whose items it already is.
'use strict';

/** Where the cart is kept. */
const CART_KEY = 'stockguard.cart';
/** The API's largest qty of one line. */
const MAX_QTY = 9999;

/**
 * @typedef {import('./api.js').Line} Line
 * @typedef {Pick<WechatMiniprogram.Wx, 'getStorageSync' | 'setStorageSync'>} Storage
 */

/**
 * readCart: the lines kept, [] when none or unreadable.
 * @param {Storage} wx
 * @returns {Line[]}
 */
function readCart(wx) {
  try {
    const kept = wx.getStorageSync(CART_KEY);
    if (!Array.isArray(kept)) return [];
    return kept.filter((l) => l && typeof l.skuId === 'string' && Number.isInteger(l.qty) && l.qty > 0)
      .map((l) => ({ skuId: l.skuId, qty: l.qty }));
  } catch (err) {
    return [];
  }
}

/**
 * @param {Storage} wx
 * @param {Line[]} lines
 * @returns {Line[]} lines
 */
function keepCart(wx, lines) {
  try {
    wx.setStorageSync(CART_KEY, lines);
  } catch (err) {
    // Storage full or unavailable: the cart lives for this page only.
  }
  return lines;
}

/**
 * addToCart adds qty of a SKU: to its line if there is one (one line a SKU, as the API
 * wants), else as a new last line; at most MAX_QTY a line.
 * @param {Storage} wx
 * @param {string} skuId
 * @param {number} qty
 * @returns {Line[]} the cart now
 */
function addToCart(wx, skuId, qty) {
  const lines = readCart(wx);
  const line = lines.find((l) => l.skuId === skuId);
  if (line) line.qty = Math.min(MAX_QTY, line.qty + qty);
  else lines.push({ skuId, qty: Math.min(MAX_QTY, qty) });
  return keepCart(wx, lines);
}

/**
 * setQty sets a line's quantity (1 to MAX_QTY); a SKU not in the cart changes nothing.
 * @param {Storage} wx
 * @param {string} skuId
 * @param {number} qty
 * @returns {Line[]}
 */
function setQty(wx, skuId, qty) {
  const q = Math.min(MAX_QTY, Math.max(1, Math.floor(qty) || 1));
  return keepCart(wx, readCart(wx).map((l) => (l.skuId === skuId ? { skuId, qty: q } : l)));
}

/**
 * removeLine takes a SKU's line out.
 * @param {Storage} wx
 * @param {string} skuId
 * @returns {Line[]}
 */
function removeLine(wx, skuId) {
  return keepCart(wx, readCart(wx).filter((l) => l.skuId !== skuId));
}

/**
 * clearCart empties the cart (once its order is placed).
 * @param {Storage} wx
 */
function clearCart(wx) {
  keepCart(wx, []);
}

module.exports = { CART_KEY, MAX_QTY, readCart, addToCart, setQty, removeLine, clearCart };
