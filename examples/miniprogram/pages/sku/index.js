// Product page: a SKU's name, price and what is left as the API says (never more), the
// countdown to its saleStartsAt, and the buy button, greyed while the SKU is SOLD_OUT,
// OFF_SALE or has nothing available, and while UPCOMING until the countdown ends. The
// countdowns run on the API's clock (api.now()), so a phone with a wrong clock does not
// open the button early. "加入购物车" adds one to the cart (cart.js); "立即购买" adds one and
// opens the cart, where the order is placed.
//
// A SKU with a waiting room (sku.queue) is bought here instead: "立即购买" takes a ticket
// (POST /skus/{skuId}/queue) and the page shows the place in line and the wait, asking
// again (GET /queue/{ticket}) no sooner than the API's nextPollSeconds and not at all
// while the page is hidden (api.js sends the ticket's last ticketToken back, so a poll
// reads no ticket). Once the ticket has a position, the page reads the SKU's line
// (GET /skus/{skuId}/line, public, through the CDN) every second instead, and the ticket
// only when the line has admitted through its position or its nextPollSeconds has passed;
// the line's soldOut is SOLD_OUT at once (docs/contract.md, GET /skus/{skuId}/line). Once
// ADMITTED, "提交订单" places the order of one unit with the admission (Admission-Token)
// before it runs out. SOLD_OUT ends the wait.
//
// A sold-out SKU offers "到货提醒": the waitlist's subscribe message is asked for, then
// the buyer joins (subscribed or not, as answered). The page shows the buyer's entry (read
// when a session is kept): waiting, or HELD units with the time left and "立即购买", which
// orders them here (the cart would see them as sold out); "取消提醒" leaves.
'use strict';
const { newIdempotencyKey } = require('../../api.js');
const config = require('../../config.js');
const { keptAddress, pickAddress } = require('../../address.js');
const { askSubscriptions } = require('../../subscribe.js');
const { yuan, msUntil, countdown, canBuy, stockNote, ticketNote, waitlistNote, messageFor, definitive } = require('../../view.js');
const { strings, t } = require('../../i18n.js');
const { addToCart } = require('../../cart.js');

/** @type {WechatMiniprogram.App.Instance<import('../../app.js').AppOption>} */
const app = getApp();

/** Seconds between reads of a ticket when the API says none (or less). */
const MIN_POLL_SECONDS = 1;
/** Seconds before a ticket is read again after a read failed. */
const RETRY_POLL_SECONDS = 5;
/** Seconds between reads of the line while the ticket waits with a position. */
const LINE_POLL_SECONDS = 1;

/**
 * queue.stage: '' (no ticket), 'WAITING', 'ADMITTED', 'SOLD_OUT' or 'EXPIRED'.
 * @typedef {{ stage: string, status: string, position: string, wait: string }} QueueView
 * @typedef {{ status: string, note: string } | null} WaitlistView
 * @typedef {{ sku: import('../../api.js').Sku | null, price: string, note: string,
 *   startsIn: string, canBuy: boolean, error: string, queue: QueueView,
 *   waitlist: WaitlistView, canNotify: boolean, busy: boolean,
 *   t: import('../../i18n.js').Table }} Data
 */

/** @type {QueueView} */
const NO_TICKET = { stage: '', status: '', position: '', wait: '' };

Page({
  data: /** @type {Data} */ ({
    sku: null, price: '', note: '', startsIn: '', canBuy: false, error: '', queue: NO_TICKET,
    waitlist: null, canNotify: false, busy: false, t: strings(),
  }),
  skuId: '',
  /** setInterval handle of the sale countdown; 0 when none runs */
  timer: 0,
  /** setInterval handle of the admission's or hold's countdown; 0 when none runs */
  clock: 0,
  /** setTimeout handle of the next ticket read; 0 when none is due */
  pollTimer: 0,
  /** when the next read (of the line or the ticket) is due (Date.now() ms) */
  nextPollAt: 0,
  /** when the ticket itself is next due, its last read's nextPollSeconds on (Date.now() ms) */
  ticketDueAt: 0,
  /** when the last read (of the ticket or the line) was sent (Date.now() ms) */
  sentAt: 0,
  hidden: false,
  /** @type {import('../../api.js').Ticket | null} */
  ticket: null,
  /** @type {import('../../api.js').WaitlistEntry | null} */
  entry: null,
  /** whether a read of the waitlist entry for its run-out hold is under way */
  reading: false,
  /** the Idempotency-Key of the order being placed here */
  orderKey: '',

  /** @param {Record<string, string | undefined>} query */
  onLoad(query) {
    this.skuId = query.skuId || '';
    this.load();
  },

  onShow() {
    this.hidden = false;
    if (this.data.sku) this.load(); // back from checkout: what is left has changed
    if (this.data.queue.stage === 'WAITING' && !this.pollTimer) {
      // Resumed no sooner than the last answer asked.
      this.pollTimer = setTimeout(() => this.poll(), Math.max(0, this.nextPollAt - Date.now()));
    }
    this.startClock();
  },

  onHide() {
    this.hidden = true;
    this.stopTimers();
  },

  onUnload() {
    this.hidden = true;
    this.stopTimers();
  },

  onPullDownRefresh() {
    this.load().then(() => wx.stopPullDownRefresh());
  },

  async load() {
    try {
      const sku = await app.api.getSku(this.skuId);
      this.show(sku);
      this.setData({ error: '' });
      if (soldOut(sku) && app.api.loggedIn()) await this.readWaitlist();
    } catch (err) {
      this.setData({ error: messageFor(err) });
    }
  },

  /** @param {import('../../api.js').Sku} sku */
  show(sku) {
    const now = app.api.now();
    const wait = sku.status === 'UPCOMING' ? msUntil(sku.saleStartsAt, now) : 0;
    this.setData({
      sku, price: yuan(sku.price), note: stockNote(sku, now),
      startsIn: wait > 0 ? t('saleStartsIn', { time: countdown(wait) }) : '', canBuy: canBuy(sku, now),
    });
    this.showWaitlist();
    this.stopTimer();
    if (wait > 0) this.timer = setInterval(() => this.tick(), 1000);
  },

  tick() {
    if (!this.timer) return; // a tick already queued when the countdown stopped
    const sku = this.data.sku;
    if (!sku) return;
    const wait = msUntil(sku.saleStartsAt, app.api.now());
    if (wait > 0) {
      this.setData({ startsIn: t('saleStartsIn', { time: countdown(wait) }) });
      return;
    }
    this.stopTimer();
    this.show(sku); // the sale has started: the button opens if anything is available
    this.load(); // and the API's word on what is left
  },

  stopTimer() {
    if (this.timer) clearInterval(this.timer);
    this.timer = 0;
  },

  stopTimers() {
    this.stopTimer();
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = 0;
    if (this.clock) clearInterval(this.clock);
    this.clock = 0;
  },

  buy() {
    if (!this.data.canBuy || this.data.busy) return;
    if (this.data.sku && this.data.sku.queue) {
      this.joinQueue();
      return;
    }
    addToCart(wx, this.skuId, 1);
    wx.switchTab({ url: '/pages/cart/index' });
  },

  add() {
    if (!this.data.canBuy) return;
    addToCart(wx, this.skuId, 1);
    wx.showToast({ title: t('addedToCart'), icon: 'success' });
  },

  joinQueue() {
    this.sentAt = Date.now();
    return this.busyWhile(async () => this.showTicket(this.readTicket(await app.api.joinQueue(this.skuId))));
  },

  /**
   * busyWhile runs one call of the buyer's at a time, the buttons greyed meanwhile, and
   * shows its failure in plain words.
   * @param {() => Promise<void>} work
   */
  async busyWhile(work) {
    if (this.data.busy) return;
    this.setData({ busy: true, error: '' });
    try {
      await work();
    } catch (err) {
      this.setData({ error: messageFor(err) });
    } finally {
      this.setData({ busy: false });
    }
  },

  /**
   * showTicket shows where the ticket stands and, while it waits, reads it again after
   * its nextPollSeconds.
   * @param {import('../../api.js').Ticket} ticket
   */
  showTicket(ticket) {
    this.ticket = ticket;
    this.setData({ queue: { stage: ticket.status, ...ticketNote(ticket, app.api.now()) } });
    if (ticket.status === 'WAITING') this.schedulePoll(placed(ticket) ? LINE_POLL_SECONDS : ticket.nextPollSeconds || 0);
    if (ticket.status === 'ADMITTED') this.startClock();
    if (ticket.status === 'SOLD_OUT') this.showWaitlist();
  },

  /**
   * schedulePoll reads the ticket (or the line) again seconds (at least
   * MIN_POLL_SECONDS) after the last read was sent, unless the page is hidden: onShow
   * resumes it, still no sooner.
   * @param {number} seconds
   */
  schedulePoll(seconds) {
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = 0;
    this.nextPollAt = this.sentAt + Math.max(seconds, MIN_POLL_SECONDS) * 1000;
    if (!this.hidden) this.pollTimer = setTimeout(() => this.poll(), Math.max(0, this.nextPollAt - Date.now()));
  },

  async poll() {
    this.pollTimer = 0;
    if (this.hidden || !this.ticket) return;
    // A read sent on time counts from when it was due, so that the answers' latency does
    // not stretch the cadence; one sent late (the page was hidden) from now.
    const now = Date.now();
    this.sentAt = this.nextPollAt <= now && now - this.nextPollAt < MIN_POLL_SECONDS * 1000 ? this.nextPollAt : now;
    try {
      const ticket = await this.read(this.ticket);
      if (!this.hidden) this.showTicket(ticket);
      else this.ticket = ticket;
    } catch (err) {
      this.setData({ error: messageFor(err) });
      if (!definitive(err)) this.schedulePoll(RETRY_POLL_SECONDS);
    }
  },

  /**
   * read: where the ticket stands now. A ticket WAITING with a position, its ticket not
   * due yet, is judged from the SKU's line (lineView): admitted through its position, the
   * ticket is read for the admission; otherwise the line's answer (SOLD_OUT, or WAITING
   * with the wait from the line). A line that cannot be read changes nothing: the next
   * second reads it again, and the ticket is read when due.
   * @param {import('../../api.js').Ticket} ticket
   * @returns {Promise<import('../../api.js').Ticket>}
   */
  async read(ticket) {
    if (ticket.status === 'WAITING' && placed(ticket) && Date.now() < this.ticketDueAt) {
      const line = await app.api.getLine(this.skuId).catch(() => null);
      const view = line ? lineView(ticket, line) : ticket;
      if (view.status !== 'ADMITTED') return view;
    }
    return this.readTicket(await app.api.getTicket(ticket.ticket));
  },

  /**
   * readTicket notes when a ticket just read from the API is next due (its
   * nextPollSeconds on) and returns it.
   * @param {import('../../api.js').Ticket} ticket
   * @returns {import('../../api.js').Ticket}
   */
  readTicket(ticket) {
    this.ticketDueAt = this.sentAt + Math.max(ticket.nextPollSeconds || 0, MIN_POLL_SECONDS) * 1000;
    return ticket;
  },

  /** startClock counts down the admission's or the hold's time left, once a second. */
  startClock() {
    const admitted = this.data.queue.stage === 'ADMITTED';
    const held = !!this.entry && this.entry.status === 'HELD';
    if (this.clock || this.hidden || (!admitted && !held)) return;
    this.clock = setInterval(() => this.tickClock(), 1000);
  },

  tickClock() {
    if (!this.clock) return;
    const now = app.api.now();
    if (this.ticket && this.data.queue.stage === 'ADMITTED') {
      const left = msUntil(this.ticket.admissionExpiresAt, now);
      this.showTicket(left > 0 ? this.ticket : { ...this.ticket, status: 'EXPIRED' });
    }
    if (this.entry && this.entry.status === 'HELD') {
      if (msUntil(this.entry.holdExpiresAt || undefined, now) > 0) this.showWaitlist();
      else if (!this.reading) {
        // Where the hold went, asked once (the clock ticks on while the answer comes).
        this.reading = true;
        this.readWaitlist().catch((err) => this.setData({ error: messageFor(err) })).then(() => { this.reading = false; });
      }
    }
    if (this.data.queue.stage !== 'ADMITTED' && !(this.entry && this.entry.status === 'HELD')) {
      clearInterval(this.clock);
      this.clock = 0;
    }
  },

  /** order: the admitted buyer's order of one unit, with the admission. */
  order() {
    if (this.data.queue.stage !== 'ADMITTED' || !this.ticket) return;
    this.placeOrder(1, this.ticket.admission);
  },

  /** buyHeld: the units the waitlist holds for the buyer, ordered as usual. */
  buyHeld() {
    if (!this.entry || this.entry.status !== 'HELD') return;
    this.placeOrder(this.entry.quantity || 1); // a HELD entry carries its quantity
  },

  /**
   * placeOrder orders qty of the SKU here and opens the pay page. A SKU that ships needs
   * an address: without one kept, this tap picks it and the next one orders (WeChat shows
   * one dialog a tap). The key is kept for a retry after a lost or busy answer.
   * @param {number} qty
   * @param {string} [admission]
   */
  async placeOrder(qty, admission) {
    const sku = this.data.sku;
    if (this.data.busy || !sku) return;
    const ships = sku.delivery !== 'none';
    const address = ships ? keptAddress(wx) : null;
    if (ships && !address) {
      await this.chooseAddress();
      return;
    }
    const asked = askSubscriptions(config.subscribeTemplates);
    this.setData({ busy: true, error: '' });
    try {
      if (!this.orderKey) this.orderKey = newIdempotencyKey();
      const order = await app.api.createOrder([{ skuId: this.skuId, qty }], this.orderKey, await asked, address || undefined, admission);
      this.orderKey = '';
      if (admission) {
        // One admission opens one order: back from paying, the page shows the SKU again.
        this.ticket = null;
        this.setData({ queue: NO_TICKET });
      }
      wx.navigateTo({ url: `/pages/pay/index?orderId=${encodeURIComponent(order.orderId)}` });
    } catch (err) {
      this.setData({ error: messageFor(err) });
      if (definitive(err)) this.orderKey = '';
    } finally {
      this.setData({ busy: false });
    }
  },

  async chooseAddress() {
    try {
      const picked = await pickAddress(wx);
      this.setData({ error: picked ? '' : t('addressNeeded') });
    } catch (err) {
      this.setData({ error: messageFor(err) });
    }
  },

  /** notify joins the waitlist, subscribed if the buyer accepts its subscribe message. */
  notify() {
    if (!this.data.canNotify) return undefined;
    return this.busyWhile(async () => {
      // Asked at once: WeChat shows the dialog only from the tap.
      const accepted = await askSubscriptions(config.waitlistTemplates);
      this.entry = await app.api.joinWaitlist(this.skuId, accepted.length > 0);
      this.showWaitlist();
      this.startClock();
    });
  },

  leave() {
    if (!this.entry) return undefined;
    return this.busyWhile(async () => {
      await app.api.leaveWaitlist(this.skuId);
      this.entry = null;
      this.showWaitlist();
    });
  },

  /** readWaitlist reads the buyer's entry; none (404) shows "到货提醒". */
  async readWaitlist() {
    try {
      this.entry = await app.api.getWaitlist(this.skuId);
    } catch (err) {
      if (!(err && typeof err === 'object' && 'statusCode' in err && err.statusCode === 404)) throw err;
      this.entry = null;
    }
    this.showWaitlist();
    this.startClock();
  },

  /** showWaitlist shows the entry, and "到货提醒" on a sold-out SKU without one. */
  showWaitlist() {
    const sku = this.data.sku;
    const out = (!!sku && soldOut(sku)) || this.data.queue.stage === 'SOLD_OUT';
    const entry = this.entry;
    this.setData({
      waitlist: entry ? { status: entry.status, note: waitlistNote(entry, app.api.now()) } : null,
      canNotify: out && !entry,
    });
  },
});

/**
 * placed: the ticket has its position in line.
 * @param {import('../../api.js').Ticket} ticket
 * @returns {boolean}
 */
function placed(ticket) {
  return typeof ticket.position === 'number';
}

/**
 * lineView: the ticket as the SKU's line says it stands (docs/contract.md, GET
 * /skus/{skuId}/line): ADMITTED once admittedThrough reaches its position (the admission
 * itself comes with the ticket's read), else SOLD_OUT when the line sold out, else
 * WAITING with the wait of the buyers ahead at the admission rate.
 * @param {import('../../api.js').Ticket} ticket
 * @param {import('../../api.js').QueueLine} line
 * @returns {import('../../api.js').Ticket}
 */
function lineView(ticket, line) {
  const ahead = Number(ticket.position) - line.admittedThrough;
  if (ahead <= 0) return { ...ticket, status: 'ADMITTED' };
  if (line.soldOut) return { ...ticket, status: 'SOLD_OUT', estimatedWaitSeconds: null, nextPollSeconds: undefined };
  return { ...ticket, estimatedWaitSeconds: Math.ceil(ahead / Math.max(line.admissionsPerSecond, 1)) };
}

/**
 * soldOut: nothing left to buy now (the waitlist's case), as opposed to off sale or not
 * on sale yet.
 * @param {import('../../api.js').Sku} sku
 * @returns {boolean}
 */
function soldOut(sku) {
  return sku.status === 'SOLD_OUT' || ((sku.status === 'ON_SALE' || sku.status === 'LOW_STOCK') && sku.available <= 0);
}
