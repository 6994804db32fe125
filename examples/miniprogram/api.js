// The stockguard HTTP API as the mini-program uses it (tools/internal/openapi/openapi.yaml in
// the repository): WeChat login, the public SKU list and SKUs, orders, payment through
// wx.requestPayment, cancel, refund and after-sale requests, the waiting room of a queued SKU
// and the waitlist of a sold-out one. Plain CommonJS without npm
// packages, so the same file runs in the mini-program and under `node --test` (with a wx shim).
//
// createApi({ baseURL, wx }) returns an object whose methods return Promises. A failed
// call rejects with an ApiError { statusCode, code, message, skuId, retryAfter } built
// from the API's error body, or with a RequestError when wx.request itself failed (no
// network, DNS, TLS), or with wx.login's / wx.requestPayment's failure as is.
//
// Sign-in: the token of POST /auth/wechat is kept with wx.setStorageSync and read back
// when the API object is made (at app start). A call that needs a buyer and has no token,
// or one known to be expired (its expiresIn is past), first signs in silently (wx.login →
// POST /auth/wechat). A call answered 401 signs in once and is sent once more; a second
// 401 is the caller's answer. A call never signs in more than once, so a token the API
// keeps refusing cannot make a loop.
//
// Busy: a 429 (RATE_LIMITED) or 503 (BUSY) is sent again after its Retry-After (seconds,
// RFC 9110 §10.2.3) plus a random part of up to half of it, so that buyers told to wait
// the same time do not all come back in the same instant; at most `retry.tries` sends in
// all, and never when Retry-After is longer than `retry.maxWaitSeconds`. Both are safe by
// the API's rules: a refused createOrder reserved nothing (and carries its
// Idempotency-Key), a refused pay, cancel or refund changed nothing.
'use strict';

/**
 * @typedef {'UPCOMING' | 'ON_SALE' | 'LOW_STOCK' | 'SOLD_OUT' | 'OFF_SALE'} SkuStatus
 *
 * A SKU as GET /skus/{skuId} answers it. price in fen; available in units, conservative
 * (never above what can be sold, 0 when SOLD_OUT); saleStartsAt RFC 3339 (status UPCOMING
 * until then).
 * limitPerUser (units one buyer may buy, 0 or absent: none said) and delivery
 * ('express' by default, 'none' for goods that do not ship) when the API gives them.
 * @typedef {{ skuId: string, name: string, price: number, currency: string,
 *   status: SkuStatus, available: number, saleStartsAt?: string, limitPerUser?: number,
 *   delivery?: 'express' | 'none', queue?: boolean }} Sku
 * (queue true: it sells through its waiting room: joinQueue, then createOrder with the
 * ticket's admission.)
 *
 * A ticket in a SKU's waiting room (docs/contract.md, GET /queue/{ticket}): WAITING with
 * position (1 = next) and estimatedWaitSeconds once placed in line (null before);
 * nextPollSeconds, how long to wait before asking again; ADMITTED with admission (the
 * Admission-Token of one order of the SKU) valid until admissionExpiresAt (RFC 3339);
 * SOLD_OUT (nothing left to buy) or EXPIRED (the admission ran out unused). ticketToken,
 * on an answer that read a placed ticket: its signed position, which getTicket keeps and
 * sends back itself.
 * @typedef {'WAITING' | 'ADMITTED' | 'SOLD_OUT' | 'EXPIRED'} TicketStatus
 * @typedef {{ ticket: string, skuId: string, status: TicketStatus, position: number | null,
 *   estimatedWaitSeconds: number | null, nextPollSeconds?: number, admission?: string,
 *   admissionExpiresAt?: string, ticketToken?: string }} Ticket
 *
 * A queued SKU's line document (docs/contract.md, GET /skus/{skuId}/line), the same for
 * every buyer and read through pageURL: every position up to admittedThrough is admitted
 * (0: none yet); soldOut, nothing can be bought any more; placed, the positions given so
 * far; admissionsPerSecond, the SKU's admission rate.
 * @typedef {{ skuId: string, admittedThrough: number, soldOut: boolean, placed: number,
 *   admissionsPerSecond: number }} QueueLine
 *
 * The buyer's place on a sold-out SKU's waitlist (POST /skus/{skuId}/waitlist): WAITING
 * for units to come back; HELD, quantity units kept for this buyer until holdExpiresAt
 * (RFC 3339), ordered with createOrder as usual; PASSED, the hold ran out unused; DONE,
 * an order used it. quantity and holdExpiresAt come once the place had a hold.
 * @typedef {'WAITING' | 'HELD' | 'PASSED' | 'DONE'} WaitlistStatus
 * @typedef {{ skuId: string, status: WaitlistStatus, quantity?: number,
 *   holdExpiresAt?: string | null }} WaitlistEntry
 *
 * One page of GET /skus: next is the `after` of the following page, absent on the last.
 * @typedef {{ skus: Sku[], next?: string }} SkuPage
 *
 * @typedef {'PENDING' | 'PAID' | 'CANCELLED' | 'REFUND_PENDING' | 'REFUNDING' | 'REFUNDED'} OrderStatus
 * @typedef {{ skuId: string, qty: number }} Line
 * @typedef {{ skuId: string, qty: number, unitPrice: number }} OrderItem
 *
 * One refund of an order (amount in fen).
 * @typedef {{ refundId?: string, outRefundNo?: string, lines?: Line[], amount: number,
 *   status: string, refundedAt?: string, error?: string }} Refund
 *
 * The delivery address as wx.chooseAddress answers it, passed through unchanged as POST
 * /orders' `address` and PUT /orders/{orderId}/address's body
 * (https://developers.weixin.qq.com/miniprogram/dev/api/open-api/address/wx.chooseAddress.html);
 * the API keeps streetName with the other address fields and drops detailInfoNew,
 * nationalCode and errMsg.
 * @typedef {{ userName: string, telNumber: string, provinceName: string, cityName: string,
 *   countyName: string, detailInfo: string, postalCode?: string, streetName?: string,
 *   detailInfoNew?: string, nationalCode?: string, errMsg?: string }} Address
 *
 * Where the shipping of an order stands (GET /orders/{orderId} `shipping`).
 * @typedef {{ status: 'QUEUED' | 'UPLOADED' | 'FAILED' | 'CANCELLED', uploadedAt?: string,
 *   error?: string }} Shipping
 *
 * One parcel the shop sent: type as POST /admin/orders/{orderId}/shipments takes it,
 * carrier WeChat's express company code, items the units in it.
 * @typedef {{ shipmentId: string, type: 'express' | 'same-city' | 'virtual' | 'self-pickup',
 *   carrier?: string, tracking?: string, items: Line[], uploadedAt?: string }} Shipment
 *
 * Whether the buyer has confirmed receipt (docs/contract.md, GET /orders/{orderId}):
 * WAITING once something shipped, CONFIRMED once WeChat's settlement event reported it,
 * with when and how (buyer: in WeChat's confirm-receipt component; auto: WeChat itself).
 * @typedef {{ status: 'WAITING' | 'CONFIRMED', confirmedAt?: string,
 *   method?: 'buyer' | 'auto' }} Receipt
 *
 * One after-sale of the buyer (docs/contract.md, POST /orders/{orderId}/aftersales):
 * REQUESTED, APPROVED (a return-refund waiting for its goods), REJECTED (rejectReason)
 * or REFUNDING (its refund outRefundNo started, listed in refunds).
 * @typedef {'refund' | 'return-refund'} AftersaleKind
 * @typedef {{ aftersaleId: string, kind: AftersaleKind, status: string, lines?: Line[],
 *   reason?: string, images?: string[], requestedAt?: string, decidedAt?: string,
 *   rejectReason?: string, receivedAt?: string, outRefundNo?: string }} Aftersale
 *
 * An order as its owner sees it: amounts in fen, times RFC 3339. refunds (oldest
 * first) and refundedAmount (what WeChat Pay reported refunded) once it has refunds;
 * refundedAt and refundAmount once it is REFUNDED; address, shipping, shipments, receipt
 * and aftersales once the API has them.
 * @typedef {{ orderId: string, status: OrderStatus, items: OrderItem[], amount: number,
 *   currency: string, createdAt: string, expiresAt: string, paidAt?: string,
 *   cancelledAt?: string, cancelReason?: 'USER' | 'TIMEOUT', transactionId?: string,
 *   refundedAt?: string, refundAmount?: number,
 *   refunds?: Refund[], refundedAmount?: number, address?: Address, shipping?: Shipping,
 *   shipments?: Shipment[], receipt?: Receipt, aftersales?: Aftersale[] }} Order
 *
 * One page of GET /orders, newest first.
 * @typedef {{ orders: Order[], next?: string }} OrderPage
 *
 * The parameters of wx.requestPayment that POST /orders/{orderId}/pay answers.
 * @typedef {{ timeStamp: string, nonceStr: string, package: string, signType: 'RSA',
 *   paySign: string }} PaymentParams
 *
 * @typedef {{ token: string, expiresIn: number }} LoginAnswer
 * @typedef {{ token: string, expiresAt: number }} Session  expiresAt: Unix ms
 *
 * The part of wx the module uses.
 * @typedef {Pick<WechatMiniprogram.Wx, 'request' | 'login' | 'requestPayment' |
 *   'getStorageSync' | 'setStorageSync' | 'removeStorageSync'>} Wx
 *
 * @typedef {object} RetryOptions
 * @property {number} [tries] sends of one call in all when answered 429/503 (default 3)
 * @property {number} [maxWaitSeconds] a longer Retry-After is not waited for (default 10)
 *
 * @typedef {object} ApiOptions
 * @property {string} baseURL the API's base URL, no trailing slash
 * @property {string} [pageURL] where the public SKU pages (GET /skus, GET /skus/{skuId},
 *   and a queued SKU's line, GET /skus/{skuId}/line) are read, no trailing slash:
 *   deployed, the stack's CloudFront distribution (its PageUrl, behind a request domain
 *   of its own), which asks the API once a second per page for every buyer; default
 *   baseURL
 * @property {Wx} wx
 * @property {() => Promise<string>} [loginCode] where sign-in codes come from; default
 *   wx.login (the local stack's stand-in accepts only its own test codes, see config.js)
 * @property {string} [storageKey] where the token is kept (default 'stockguard.session')
 * @property {RetryOptions} [retry]
 * @property {() => number} [now] the clock, Unix ms (default Date.now)
 * @property {() => number} [random] in [0, 1) (default Math.random)
 * @property {(ms: number) => Promise<void>} [sleep]
 *
 * @typedef {'GET' | 'POST' | 'PUT' | 'DELETE'} Method one of WX_REQUEST_METHODS
 * @typedef {{ data?: WechatMiniprogram.IAnyObject, header?: Record<string, string>,
 *   token?: string, base?: string }} SendOptions base: the base URL, default baseURL
 */

/**
 * The methods wx.request sends ("wx.request", object.method 的合法值:
 * https://developers.weixin.qq.com/miniprogram/dev/api/network/request/wx.request.html).
 * PATCH is not among them: the address change is PUT /orders/{orderId}/address.
 */
const WX_REQUEST_METHODS = Object.freeze(['OPTIONS', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'TRACE', 'CONNECT']);

/** A token is treated as expired this long before its expiresIn runs out (ms). */
const EXPIRY_MARGIN_MS = 60000;
/** A device clock this far from the API's is corrected for (ms); see now(). */
const CLOCK_TOLERANCE_MS = 2000;

/** ApiError is the API's refusal: its HTTP status and error body. */
class ApiError extends Error {
  /**
   * @param {number} statusCode
   * @param {unknown} body the error body {code, message, skuId?, saleStartsAt?}, or
   *   API Gateway's {message}
   * @param {Record<string, string> | undefined} header the response headers
   * @param {number} nowMs for a Retry-After given as an HTTP date
   */
  constructor(statusCode, body, header, nowMs) {
    const b = body && typeof body === 'object' ? /** @type {Record<string, unknown>} */ (body) : {};
    super(typeof b.message === 'string' && b.message ? b.message : `HTTP ${statusCode}`);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    this.code = typeof b.code === 'string' ? b.code : '';
    this.skuId = typeof b.skuId === 'string' ? b.skuId : '';
    this.saleStartsAt = typeof b.saleStartsAt === 'string' ? b.saleStartsAt : '';
    /** seconds the API asked to wait (Retry-After), 0 when it did not say */
    this.retryAfter = retryAfterSeconds(headerValue(header, 'Retry-After'), nowMs);
  }
}

/** RequestError is a wx.request that got no HTTP answer (network, DNS, TLS, timeout). */
class RequestError extends Error {
  /** @param {string} errMsg wx.request's errMsg */
  constructor(errMsg) {
    super(errMsg);
    this.name = 'RequestError';
    this.errMsg = errMsg;
  }
}

/**
 * headerValue reads a response header whatever its case.
 * @param {Record<string, string> | undefined} header
 * @param {string} name
 * @returns {string}
 */
function headerValue(header, name) {
  if (!header) return '';
  const want = name.toLowerCase();
  for (const key of Object.keys(header)) {
    if (key.toLowerCase() === want) return String(header[key]);
  }
  return '';
}

/**
 * retryAfterSeconds reads Retry-After: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 * @param {string} value
 * @param {number} nowMs
 * @returns {number} whole seconds, 0 when absent or unreadable
 */
function retryAfterSeconds(value, nowMs) {
  if (!value) return 0;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/** @param {number} ms */
function defaultSleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * newIdempotencyKey is a fresh Idempotency-Key: 1–64 printable ASCII characters.
 * @returns {string}
 */
function newIdempotencyKey() {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/**
 * @param {ApiOptions} options
 */
function createApi({
  baseURL, pageURL = baseURL, wx, loginCode, storageKey = 'stockguard.session', retry = {},
  now = () => Date.now(), random = Math.random, sleep = defaultSleep,
}) {
  const tries = retry.tries || 3;
  const maxWaitSeconds = retry.maxWaitSeconds === undefined ? 10 : retry.maxWaitSeconds;
  /** @type {Session | null} */
  let session = readSession();
  /** @type {Promise<LoginAnswer> | null} */
  let signingIn = null;
  let clockOffsetMs = 0;
  /** @type {Map<string, string>} ticket id → the last ticketToken an answer carried */
  const ticketTokens = new Map();

  /** @returns {Session | null} */
  function readSession() {
    try {
      const stored = wx.getStorageSync(storageKey);
      if (stored && typeof stored.token === 'string' && stored.token && typeof stored.expiresAt === 'number') {
        return { token: stored.token, expiresAt: stored.expiresAt };
      }
    } catch (err) {
      // Unreadable storage: sign in again when a call needs it.
    }
    return null;
  }

  /** @param {Session | null} s */
  function keepSession(s) {
    session = s;
    try {
      if (s) wx.setStorageSync(storageKey, s);
      else wx.removeStorageSync(storageKey);
    } catch (err) {
      // Storage full or unavailable: the token still lives for this run.
    }
  }

  /** @returns {boolean} */
  function fresh() {
    return session !== null && now() < session.expiresAt - EXPIRY_MARGIN_MS;
  }

  /**
   * One wx.request, as a Promise of its answer.
   * @param {Method} method
   * @param {string} path
   * @param {SendOptions} options
   * @returns {Promise<WechatMiniprogram.RequestSuccessCallbackResult>}
   */
  function requestOnce(method, path, { data, header, token, base = baseURL }) {
    /** @type {Record<string, string>} */
    const h = { 'Content-Type': 'application/json', ...header };
    if (token) h.Authorization = `Bearer ${token}`;
    return new Promise((resolve, reject) => {
      wx.request({
        url: base + path,
        method,
        data,
        header: h,
        success: resolve,
        fail: (err) => reject(new RequestError(err.errMsg)),
      });
    });
  }

  /**
   * send makes the call, waiting out 429/503 as the module comment says.
   * @template T
   * @param {Method} method
   * @param {string} path
   * @param {SendOptions} [options]
   * @returns {Promise<T>}
   */
  async function send(method, path, options = {}) {
    for (let attempt = 1; ; attempt++) {
      const sentAt = now();
      const res = await requestOnce(method, path, options);
      noteClock(res.header, sentAt);
      if (res.statusCode >= 200 && res.statusCode < 300) return /** @type {T} */ (res.data);
      const err = new ApiError(res.statusCode, res.data, res.header, now());
      const busy = res.statusCode === 429 || res.statusCode === 503;
      const wait = err.retryAfter || 1;
      if (!busy || attempt >= tries || wait > maxWaitSeconds) throw err;
      await sleep(wait * 1000 * (1 + random() / 2));
    }
  }

  /**
   * noteClock learns how far the device clock is from the API's (its Date header, whole
   * seconds) so that countdowns end when the API says, not when a wrong phone clock does.
   * @param {Record<string, string>} header
   * @param {number} sentAt
   */
  function noteClock(header, sentAt) {
    const date = Date.parse(headerValue(header, 'Date'));
    if (Number.isNaN(date)) return;
    const local = (sentAt + now()) / 2;
    const offset = date + 500 - local; // the header drops the milliseconds: mid-second
    clockOffsetMs = Math.abs(offset) > CLOCK_TOLERANCE_MS ? offset : 0;
  }

  /**
   * signIn: wx.login's code → POST /auth/wechat → the token, kept in storage. Calls made
   * while one sign-in runs share it.
   * @returns {Promise<LoginAnswer>}
   */
  function signIn() {
    if (!signingIn) {
      signingIn = (async () => {
        const code = loginCode ? await loginCode() : await wxLogin();
        /** @type {LoginAnswer} */
        const answer = await send('POST', '/auth/wechat', { data: { code } });
        keepSession({ token: answer.token, expiresAt: now() + answer.expiresIn * 1000 });
        return answer;
      })();
      signingIn.then(() => { signingIn = null; }, () => { signingIn = null; });
    }
    return signingIn;
  }

  /** @returns {Promise<string>} */
  function wxLogin() {
    return new Promise((resolve, reject) => {
      wx.login({ success: (res) => resolve(res.code), fail: reject });
    });
  }

  /**
   * asBuyer sends a call that needs the buyer's token: at most one sign-in and one more
   * send per call (module comment).
   * @template T
   * @param {Method} method
   * @param {string} path
   * @param {SendOptions} [options]
   * @returns {Promise<T>}
   */
  async function asBuyer(method, path, options = {}) {
    let signedIn = false;
    if (!fresh()) {
      await signIn();
      signedIn = true;
    }
    const token = session ? session.token : '';
    try {
      return await send(method, path, { ...options, token });
    } catch (err) {
      if (!(err instanceof ApiError) || err.statusCode !== 401) throw err;
      if (session && session.token !== token) {
        // Another call signed in meanwhile: its token gets the one more send.
        return send(method, path, { ...options, token: session.token });
      }
      if (signedIn) throw err; // signed in for this very call: the API refuses anyway
      keepSession(null);
      await signIn();
      return send(method, path, { ...options, token: session ? session.token : '' });
    }
  }

  /**
   * keepTicketToken notes the ticketToken the answer carries, if any, for later reads.
   * @param {Ticket} answer
   * @returns {Ticket}
   */
  function keepTicketToken(answer) {
    if (answer && typeof answer.ticketToken === 'string' && answer.ticketToken) {
      ticketTokens.set(answer.ticket, answer.ticketToken);
    }
    return answer;
  }

  /** @param {string} id */
  const seg = (id) => encodeURIComponent(id);
  /** @param {string} after */
  const afterQuery = (after) => (after ? `?after=${encodeURIComponent(after)}` : '');

  return {
    /**
     * login signs in now (the calls below do it by themselves when needed).
     * @returns {Promise<LoginAnswer>} expiresIn in seconds (7200)
     */
    login() {
      return signIn();
    },
    /** @returns {boolean} whether a token that is not known to be expired is kept */
    loggedIn() {
      return fresh();
    },
    /** @returns {number} the API's clock as far as known, Unix ms */
    now() {
      return now() + clockOffsetMs;
    },
    /**
     * listSkus: one page of the public SKU list (GET /skus?after=).
     * @param {string} [after] the `next` of the previous page; '' or absent for the first
     * @returns {Promise<SkuPage>}
     */
    listSkus(after = '') {
      return send('GET', `/skus${afterQuery(after)}`, { base: pageURL });
    },
    /**
     * @param {string} skuId
     * @returns {Promise<Sku>}
     */
    getSku(skuId) {
      return send('GET', `/skus/${seg(skuId)}`, { base: pageURL });
    },
    /**
     * createOrder reserves stock for the lines and opens a PENDING order. The same
     * idempotencyKey with the same lines answers the same order and never reserves twice.
     * subscriptions are the subscribe-message template ids the buyer accepted
     * (wx.requestSubscribeMessage), sent only when there are some; address the
     * delivery address (wx.chooseAddress's fields), needed when a line ships. admission:
     * the ADMITTED ticket's token, sent as the Admission-Token header, which a line of a
     * queued SKU needs (403 ADMISSION_REQUIRED without it; one queued SKU an order).
     * @param {Line[]} items
     * @param {string} [idempotencyKey]
     * @param {string[]} [subscriptions]
     * @param {Address} [address]
     * @param {string} [admission]
     * @returns {Promise<Order>}
     */
    createOrder(items, idempotencyKey, subscriptions = [], address, admission) {
      /** @type {Record<string, string>} */
      const header = idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {};
      if (admission) header['Admission-Token'] = admission;
      /** @type {{ items: Line[], subscriptions?: string[], address?: Address }} */
      const data = { items };
      if (subscriptions.length > 0) data.subscriptions = subscriptions;
      if (address) data.address = address;
      return asBuyer('POST', '/orders', { data, header });
    },
    /**
     * joinQueue: POST /skus/{skuId}/queue, the buyer's ticket in a queued SKU's waiting
     * room (202). One ticket per buyer and SKU: asking again answers the same ticket, its
     * place kept. 409 QUEUE_NOT_ENABLED: the SKU sells directly.
     * @param {string} skuId
     * @returns {Promise<Ticket>}
     */
    async joinQueue(skuId) {
      return keepTicketToken(await asBuyer('POST', `/skus/${seg(skuId)}/queue`));
    },
    /**
     * getTicket: GET /queue/{ticket}, where the ticket stands now. Not sooner than its
     * last answer's nextPollSeconds (the page waits that long between reads). The last
     * ticketToken an answer carried for the ticket (kept in memory; an answer without one
     * keeps it) goes with the read as the Ticket-Token header, so that the API answers
     * without reading the ticket (docs/contract.md, GET /queue/{ticket}); one it does not
     * accept is ignored, the ticket read as without it.
     * @param {string} ticket
     * @returns {Promise<Ticket>}
     */
    async getTicket(ticket) {
      const token = ticketTokens.get(ticket);
      /** @type {Record<string, string>} */
      const header = token ? { 'Ticket-Token': token } : {};
      return keepTicketToken(await asBuyer('GET', `/queue/${seg(ticket)}`, { header }));
    },
    /**
     * getLine: GET /skus/{skuId}/line, the queued SKU's line document, public and the
     * same for every buyer, so read at pageURL (through the CDN: no function runs for
     * it). A buyer with a position reads it each second instead of its ticket
     * (docs/contract.md, GET /skus/{skuId}/line). 409 QUEUE_NOT_ENABLED: no waiting room.
     * @param {string} skuId
     * @returns {Promise<QueueLine>}
     */
    getLine(skuId) {
      return send('GET', `/skus/${seg(skuId)}/line`, { base: pageURL });
    },
    /**
     * joinWaitlist: POST /skus/{skuId}/waitlist, the buyer's place on a sold-out SKU's
     * waitlist (201 new, 200 the place already held, as it stands). subscribed: whether
     * the buyer accepted the waitlist's subscribe message (config.waitlistTemplates).
     * @param {string} skuId
     * @param {boolean} subscribed
     * @returns {Promise<WaitlistEntry>}
     */
    joinWaitlist(skuId, subscribed) {
      return asBuyer('POST', `/skus/${seg(skuId)}/waitlist`, { data: { subscribed } });
    },
    /**
     * getWaitlist: GET /skus/{skuId}/waitlist, the buyer's place; 404
     * WAITLIST_NOT_FOUND when the buyer has none.
     * @param {string} skuId
     * @returns {Promise<WaitlistEntry>}
     */
    getWaitlist(skuId) {
      return asBuyer('GET', `/skus/${seg(skuId)}/waitlist`);
    },
    /**
     * leaveWaitlist: DELETE /skus/{skuId}/waitlist (204), the buyer's place given up.
     * @param {string} skuId
     * @returns {Promise<void>}
     */
    async leaveWaitlist(skuId) {
      await asBuyer('DELETE', `/skus/${seg(skuId)}/waitlist`);
    },
    /**
     * listOrders: one page of the buyer's own orders, newest first (GET /orders?after=).
     * @param {string} [after]
     * @returns {Promise<OrderPage>}
     */
    listOrders(after = '') {
      return asBuyer('GET', `/orders${afterQuery(after)}`);
    },
    /**
     * @param {string} orderId
     * @returns {Promise<Order>}
     */
    getOrder(orderId) {
      return asBuyer('GET', `/orders/${seg(orderId)}`);
    },
    /**
     * changeAddress: PUT /orders/{orderId}/address, the order's new delivery address
     * (wx.chooseAddress's answer as it is), while the order is PENDING or PAID and
     * nothing of it has shipped; 409 ADDRESS_LOCKED after that. PUT, not PATCH, which
     * wx.request cannot send (WX_REQUEST_METHODS); the same address again is 200.
     * @param {string} orderId
     * @param {Address} address
     * @returns {Promise<Order>}
     */
    changeAddress(orderId, address) {
      return asBuyer('PUT', `/orders/${seg(orderId)}/address`, { data: address });
    },
    /**
     * pay: POST /orders/{orderId}/pay for the wx.requestPayment parameters, then the
     * payment sheet. Resolves once the buyer has paid (the order turns PAID when WeChat
     * Pay's notification reaches the API: see waitForStatus); rejects with
     * wx.requestPayment's failure when the buyer closed the sheet ("…:fail cancel").
     * @param {string} orderId
     * @returns {Promise<PaymentParams>}
     */
    async pay(orderId) {
      /** @type {PaymentParams} */
      const params = await asBuyer('POST', `/orders/${seg(orderId)}/pay`);
      await new Promise((resolve, reject) => {
        wx.requestPayment({
          timeStamp: params.timeStamp, nonceStr: params.nonceStr, package: params.package,
          signType: params.signType, paySign: params.paySign, success: resolve, fail: reject,
        });
      });
      return params;
    },
    /**
     * cancel: PENDING → CANCELLED, its stock released once.
     * @param {string} orderId
     * @returns {Promise<Order>}
     */
    cancel(orderId) {
      return asBuyer('POST', `/orders/${seg(orderId)}/cancel`);
    },
    /**
     * refund: the buyer refunds what is left of a PAID order, within the shop's refund
     * window (409 REFUND_NOT_ALLOWED outside it). Asking again refunds nothing twice.
     * @param {string} orderId
     * @returns {Promise<Order>}
     */
    refund(orderId) {
      return asBuyer('POST', `/orders/${seg(orderId)}/refund`);
    },
    /**
     * requestAftersale: POST /orders/{orderId}/aftersales, an after-sale request (202
     * with the order, the after-sale REQUESTED in its aftersales). aftersaleId (1–54
     * printable ASCII characters) is its idempotency key: send the same one again after
     * a lost answer; lines absent means every unit left.
     * @param {string} orderId
     * @param {{ aftersaleId: string, kind: AftersaleKind, lines?: Line[], reason: string, images?: string[] }} request
     * @returns {Promise<Order>}
     */
    requestAftersale(orderId, request) {
      return asBuyer('POST', `/orders/${seg(orderId)}/aftersales`, { data: request });
    },
    /**
     * waitForStatus reads the order until its status is one of statuses, at most tries
     * times intervalMs apart; answers the last read.
     * @param {string} orderId
     * @param {OrderStatus[]} statuses
     * @param {{ tries?: number, intervalMs?: number }} [options]
     * @returns {Promise<Order>}
     */
    async waitForStatus(orderId, statuses, { tries: reads = 20, intervalMs = 500 } = {}) {
      for (let i = 1; ; i++) {
        /** @type {Order} */
        const order = await asBuyer('GET', `/orders/${seg(orderId)}`);
        if (statuses.includes(order.status) || i >= reads) return order;
        await sleep(intervalMs);
      }
    },
  };
}

/** @typedef {ReturnType<typeof createApi>} Api */

module.exports = { createApi, ApiError, RequestError, newIdempotencyKey, headerValue, WX_REQUEST_METHODS };
