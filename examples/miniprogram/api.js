// The stockguard API as the mini-program uses it (CONTRACT.md): WeChat login, SKUs,
// orders, payment through wx.requestPayment, cancel. Plain CommonJS, no npm package, so
// the same file runs in the mini-program and under `node --test` (with a wx shim).
//
// createApi({ baseURL, wx }) returns an object whose methods return Promises. Failed
// calls reject with an ApiError { statusCode, code, message, retryAfter } built from
// the contract's error body, or with the wx.* failure as is.

class ApiError extends Error {
  constructor(statusCode, body, header) {
    const b = body && typeof body === 'object' ? body : {};
    super(b.message || `HTTP ${statusCode}`);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    this.code = b.code || '';
    this.skuId = b.skuId || '';
    const retry = header && (header['Retry-After'] || header['retry-after']);
    this.retryAfter = retry ? Number(retry) : 0; // seconds
  }
}

// call turns a wx.* API taking {success, fail} into a Promise.
function call(fn, options) {
  return new Promise((resolve, reject) => fn({ ...options, success: resolve, fail: reject }));
}

function createApi({ baseURL, wx }) {
  let token = '';

  async function request(method, path, data, extraHeader) {
    const header = { 'Content-Type': 'application/json', ...extraHeader };
    if (token) header.Authorization = `Bearer ${token}`;
    const res = await call(wx.request, { url: baseURL + path, method, data, header });
    if (res.statusCode >= 200 && res.statusCode < 300) return res.data;
    throw new ApiError(res.statusCode, res.data, res.header);
  }

  return {
    // login: wx.login's code → POST /auth/wechat → the token every later call sends.
    async login() {
      const { code } = await call(wx.login, {});
      const res = await request('POST', '/auth/wechat', { code });
      token = res.token;
      return res; // { token, expiresIn (seconds) }
    },
    loggedIn() {
      return token !== '';
    },
    // getSku: { skuId, name, price (fen), currency, status, available }.
    getSku(skuId) {
      return request('GET', `/skus/${encodeURIComponent(skuId)}`);
    },
    // createOrder: items [{ skuId, qty }]; the same idempotencyKey on a retry never
    // reserves twice.
    createOrder(items, idempotencyKey) {
      const header = idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {};
      return request('POST', '/orders', { items }, header);
    },
    getOrder(orderId) {
      return request('GET', `/orders/${encodeURIComponent(orderId)}`);
    },
    // pay: POST /orders/{id}/pay for the wx.requestPayment parameters, then the
    // payment sheet. Resolves once the buyer has paid; the order turns PAID when WeChat
    // Pay's notification arrives (see waitForStatus).
    async pay(orderId) {
      const params = await request('POST', `/orders/${encodeURIComponent(orderId)}/pay`);
      await call(wx.requestPayment, {
        timeStamp: params.timeStamp, nonceStr: params.nonceStr, package: params.package,
        signType: params.signType, paySign: params.paySign,
      });
      return params;
    },
    cancel(orderId) {
      return request('POST', `/orders/${encodeURIComponent(orderId)}/cancel`);
    },
    // waitForStatus polls the order until its status is one of statuses.
    async waitForStatus(orderId, statuses, { tries = 20, intervalMs = 250 } = {}) {
      for (let i = 0; ; i++) {
        const order = await request('GET', `/orders/${encodeURIComponent(orderId)}`);
        if (statuses.includes(order.status) || i + 1 >= tries) return order;
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    },
  };
}

// secondsLeft is the payment countdown: whole seconds until the order's expiresAt.
function secondsLeft(order, nowMs) {
  return Math.max(0, Math.floor((Date.parse(order.expiresAt) - nowMs) / 1000));
}

// yuan renders fen as yuan with two decimals.
function yuan(fen) {
  return (fen / 100).toFixed(2);
}

module.exports = { createApi, ApiError, secondsLeft, yuan };
