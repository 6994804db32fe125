// The merchant API (docs/contract.md, "Merchant API") as the console calls it: every
// route under <api>/admin/, the staff member's access token as Bearer.

export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

export interface Sku {
  skuId: string; name: string; price: number; currency: string; onSale: boolean; status: string;
  saleStartsAt?: string; limitPerUser: number; shards: number; available: number; reserved: number; onHand: number;
  updatedBy?: string; updatedAt?: string;
  /** The waiting room (docs/contract.md, POST /admin/skus): queue on, the fair window in seconds (0–300), the risk threshold (0–4, 0: no check). */
  queue?: boolean; fairWindowSeconds?: number; riskThreshold?: number;
}
export interface Line { skuId: string; qty: number; }
export interface Refund {
  refundId: string; outRefundNo: string; lines: Line[]; amount: number; status: string; requestedAt: string;
  restocked: boolean; refundedAt?: string; error?: string; resolution?: string;
}
export interface Shipment { shipmentId: string; type: string; carrier?: string; tracking?: string; items?: Line[]; contact?: string; uploadedAt?: string; }
/** A buyer's after-sale (POST /orders/{orderId}/aftersales) as the merchant decides it. */
export interface Aftersale {
  aftersaleId: string; kind: 'refund' | 'return-refund'; lines: Line[]; reason: string; images?: string[];
  status: 'REQUESTED' | 'APPROVED' | 'REJECTED' | 'REFUNDING' | 'REFUNDED'; requestedAt: string;
  decidedAt?: string; rejectReason?: string; receivedAt?: string; outRefundNo?: string;
}
/** A merchant's step on an after-sale: POST /admin/orders/{orderId}/aftersales/{aftersaleId}/<step>. */
export type AftersaleStep = 'approve' | 'reject' | 'received';
/** The buyer's receipt of the goods, once something shipped: WAITING, or CONFIRMED (by the buyer or WeChat's auto). */
export interface Receipt { status: 'WAITING' | 'CONFIRMED'; confirmedAt?: string; method?: 'buyer' | 'auto'; }
export interface Order {
  orderId: string; status: string; items: { skuId: string; qty: number; unitPrice?: number; price?: number }[]; amount: number; currency: string;
  createdAt: string; expiresAt: string; paidAt?: string; cancelledAt?: string; cancelReason?: string; transactionId?: string;
  refundedAt?: string; refundAmount?: number; refunds?: Refund[]; refundedAmount?: number; userId: string;
  shipping?: { status: string; uploadedAt?: string; error?: string }; shipments?: Shipment[]; receipt?: Receipt; aftersales?: Aftersale[];
  presale?: { shipAt: string; status: string; declaredAt?: string; error?: string };
  /** The delivery address as wx.chooseAddress gave it (docs/contract.md, "POST /orders"), whole in the merchant's view; absent when the order ships nothing. */
  address?: {
    userName: string; telNumber: string; provinceName: string; cityName: string; countyName: string;
    streetName?: string; detailInfo: string; postalCode?: string;
  };
}
export interface Report {
  skusChecked: number; differences: { skuId: string; rule: string; expected: number; actual: number }[];
  overdueOrders: string[]; refundProblems?: string[]; stuckRefunds?: string[]; repaired: { skuId: string; rule: string; delta: number }[]; durationMs: number;
}

export class Api {
  constructor(private base: string, private token: () => string, private onUnauthorized: () => void) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let resp: Response;
    try {
      resp = await fetch(this.base + path, {
        method,
        headers: { Authorization: 'Bearer ' + this.token(), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError(0, 'network', 'network error');
    }
    const text = await resp.text();
    const json = text ? JSON.parse(text) : {};
    if (!resp.ok) {
      if (resp.status === 401) this.onUnauthorized();
      throw new ApiError(resp.status, json.code ?? (resp.status === 401 ? 'UNAUTHORIZED' : 'HTTP_' + resp.status), json.message ?? text);
    }
    return json as T;
  }

  skus(after = '') { return this.call<{ skus: Sku[]; next?: string }>('GET', '/admin/skus' + (after ? '?after=' + encodeURIComponent(after) : '')); }
  async allSkus(): Promise<Sku[]> {
    const all: Sku[] = [];
    let next = '';
    do {
      const page = await this.skus(next);
      all.push(...page.skus);
      next = page.next ?? '';
    } while (next);
    return all;
  }
  createSku(b: Record<string, unknown>) { return this.call<Sku>('POST', '/admin/skus', b); }
  patchSku(id: string, b: Record<string, unknown>) { return this.call<Sku>('PATCH', '/admin/skus/' + encodeURIComponent(id), b); }
  adjust(id: string, b: { adjustmentId: string; delta: number; reason: string }) {
    return this.call<{ replayed: boolean; sku: Sku }>('POST', '/admin/skus/' + encodeURIComponent(id) + '/adjustments', b);
  }
  reshard(id: string, shards: number) {
    return this.call<{ shards: number; moved: number; complete: boolean }>('PUT', '/admin/skus/' + encodeURIComponent(id) + '/shards', { shards });
  }
  order(id: string) { return this.call<Order>('GET', '/admin/orders/' + encodeURIComponent(id)); }
  /** A page of orders in a status (PENDING_OVERDUE, REFUND_PENDING, REFUNDING) or, given { userId }, of one buyer. */
  orders(by: string | { userId: string }, after = '') {
    const q = typeof by === 'string' ? 'status=' + by : 'userId=' + encodeURIComponent(by.userId);
    return this.call<{ orders: Order[]; next?: string }>('GET', '/admin/orders?' + q + (after ? '&after=' + encodeURIComponent(after) : ''));
  }
  refund(id: string, b: { restock: boolean; reason: string; refundId?: string; lines?: Line[] }) {
    return this.call<Order>('POST', '/admin/orders/' + encodeURIComponent(id) + '/refund', b);
  }
  refundAction(id: string, outRefundNo: string, action: 'retry' | 'settle', reason: string) {
    return this.call<Order>('POST', `/admin/orders/${encodeURIComponent(id)}/refunds/${encodeURIComponent(outRefundNo)}/${action}`, { reason });
  }
  /** Approves, rejects (with a reason told to the buyer) or receives the goods of an after-sale; answers the order. */
  aftersale(id: string, aftersaleId: string, step: AftersaleStep, reason?: string) {
    return this.call<Order>('POST', `/admin/orders/${encodeURIComponent(id)}/aftersales/${encodeURIComponent(aftersaleId)}/${step}`, step === 'reject' ? { reason } : undefined);
  }
  ship(id: string, b: Record<string, unknown>) { return this.call<{ shipping: unknown }>('POST', '/admin/orders/' + encodeURIComponent(id) + '/shipments', b); }
  presale(id: string, shipAt: string) { return this.call<unknown>('POST', '/admin/orders/' + encodeURIComponent(id) + '/presale', { shipAt }); }
  latestReport() { return this.call<Report>('GET', '/admin/reconcile/latest'); }
  runReconcile() { return this.call<Report>('POST', '/admin/reconcile'); }
}

/**
 * aftersaleSteps are the steps an after-sale takes now: approve or reject while REQUESTED; received or reject
 * once a return-refund is APPROVED (reject: its goods never came, or another refund took its units).
 */
export function aftersaleSteps(a: Pick<Aftersale, 'kind' | 'status'>): AftersaleStep[] {
  if (a.status === 'REQUESTED') return ['approve', 'reject'];
  if (a.status === 'APPROVED' && a.kind === 'return-refund') return ['received', 'reject'];
  return [];
}

/** yuan shows fen as yuan with two decimals: 39900 → "¥399.00". */
export function yuan(fen: number): string {
  return '¥' + (fen / 100).toFixed(2);
}

/** newKey is a fresh idempotency key: a prefix and a random part, within the contract's 1–64 [0-9A-Za-z_.:-]. */
export function newKey(prefix: string): string {
  return prefix + '-' + crypto.randomUUID().replace(/-/g, '').slice(0, 16);
}

/** when shows an RFC 3339 time in the page's language, "—" for none. */
export function when(s: string | undefined, lang: string): string {
  return s ? new Date(s).toLocaleString(lang, { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }) : '—';
}
