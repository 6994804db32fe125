import type { Messages } from './zh-CN';

// English, the second locale: the same keys as zh-CN.ts (the type says so).
const enUS: Messages = {
  app: { title: 'stockguard merchant console', signOut: 'Sign out', role: 'Role', language: '中文', loading: 'Loading…', signingIn: 'Signing in…', signIn: 'Sign in', signedOut: 'Sign in to run the shop', readOnly: 'read only' },
  roles: { owner: 'Owner', operator: 'Operator', viewer: 'Viewer', none: 'No role' },
  nav: { skus: 'SKUs', live: 'Live sale', orders: 'Orders', refunds: 'Refunds to handle', reconcile: 'Reconcile' },
  common: { refresh: 'Refresh', save: 'Save', cancel: 'Cancel', confirm: 'OK', yes: 'Yes', no: 'No', none: 'None', ok: 'Done', reason: 'Reason', idempotencyKey: 'Idempotency key', idempotencyHelp: 'sending the same key again applies it once', updated: 'Updated', loadMore: 'Load more', notAllowed: 'Your role may not do this', required: 'Required' },
  skus: {
    title: 'SKUs', create: 'New SKU', skuId: 'SKU id', name: 'Name', price: 'Price (CNY)', stock: 'Initial stock', limit: 'Per-user limit', shards: 'Shards',
    onHand: 'On-hand', available: 'Available', reserved: 'Reserved', status: 'Status', saleStartsAt: 'Sale starts', actions: 'Actions',
    restock: 'Restock', writeOff: 'Write off', units: 'Units', adjustTitle: '{{kind}}: {{sku}}', sale: 'Sale', onSale: 'On sale',
    saleNow: 'Start now', saleAt: 'Start at', offSale: 'Take off sale', reshard: 'Reshard', reshardHelp: 'more shards take more orders a second on a hot SKU (1–64)',
    limitTitle: 'Per-user limit: {{sku}}', limitHelp: '0: no limit', created: 'Created {{sku}}', adjusted: '{{kind}}: {{qty}} units ({{sku}})', replayed: 'This idempotency key was applied before; nothing changed again',
    resharded: 'Shards: {{shards}} ({{moved}} units moved{{more}})', notComplete: '; units still reserved on old shards, try again later', saved: 'Saved',
    statuses: { ON_SALE: 'On sale', UPCOMING: 'Upcoming', SOLD_OUT: 'Sold out', OFF_SALE: 'Off sale' },
    queue: 'Waiting room', queueHelp: 'buyers take a ticket and order once admitted', queueTitle: 'Waiting room: {{sku}}',
    queueBadge: 'Queue · fair window {{s}} s', riskBadge: 'Risk ≥{{n}}',
    fairWindow: 'Fair window (s)', fairWindowHelp: 'arrivals this long after the sale starts are put in a random order (0–300, needs the waiting room)',
    riskThreshold: 'Risk threshold', riskHelp: 'buyers WeChat rates at or above it are refused (1–4, 0: no check)',
  },
  live: {
    title: 'Live sale', hint: 'Refreshed every {{s}} s; rates are the stock counters\' change between two refreshes (units/s)', none: 'No SKU on sale or upcoming',
    available: 'Available', reservedRate: 'Ordered units/s', paidRate: 'Paid units/s', releasedRate: 'Released units/s', pending: 'Pending (reserved)', sold: 'Sold since opened',
    limits: 'Nearest their ceilings', shardLoad: 'Shard writes', shardLoadHelp: 'each shard takes at most 1,000 writes a second (a DynamoDB partition\'s limit)', stockLeft: 'On-hand reserved', refusals: 'Refusals/s',
    refusalsHelp: 'refusals change nothing in the database; their rate is on the CloudWatch dashboard (OperationsDashboard)', lastOrders: 'Orders just in',
  },
  orders: {
    title: 'Orders', search: 'Find orders', byId: 'By order id', byStatus: 'By status', orderId: 'Order id', buyer: 'Buyer', status: 'Status', amount: 'Amount', createdAt: 'Placed', paidAt: 'Paid',
    lines: 'Lines', qty: 'Qty', unitPrice: 'Unit price', payment: 'Payment', transactionId: 'WeChat Pay transaction', refunds: 'Refunds', shipments: 'Shipments', presale: 'Presale',
    notFound: 'No such order', refund: 'Partial refund', refundAll: 'Refund all', restock: 'Put back in stock', refundLines: 'Units to refund', refundId: 'Refund id (idempotency key)', refundDone: 'Refund requested: {{no}}',
    ship: 'Ship', shipType: 'Type', carrier: 'Carrier', tracking: 'Tracking number', contact: 'Contact (masked)', contactHelp: 'required for SF, e.g. 189****1234', shipItems: 'In this parcel', shipped: 'Shipped: {{id}}',
    shipAt: 'Ships at', declarePresale: 'Declare a presale', declared: 'Presale declared', byBuyer: 'By buyer (user id)', address: 'Address',
    statusList: { PENDING_OVERDUE: 'Unpaid past expiry', REFUND_PENDING: 'Refund pending', REFUNDING: 'Refunding' },
    shipTypes: { express: 'Express', 'same-city': 'Same city', virtual: 'Virtual', 'self-pickup': 'Self pickup' },
    uploadedAt: 'Uploaded to WeChat', receipt: 'Receipt', receiptSt: { WAITING: 'Waiting for the buyer', CONFIRMED: 'Confirmed' }, receiptBy: { buyer: 'by the buyer', auto: 'by WeChat (auto)' },
    afterSales: 'After-sales', as: {
      id: 'After-sale id', kind: 'Kind', kinds: { refund: 'Refund only', 'return-refund': 'Return and refund' }, reason: 'Reason', requestedAt: 'Requested', decidedAt: 'Decided', receivedAt: 'Goods back',
      none: 'No after-sales', approve: 'Approve', reject: 'Reject', received: 'Goods received', rejectReason: 'Reason (told to the buyer)',
      done: { approve: 'After-sale {{id}} approved', reject: 'After-sale {{id}} rejected', received: 'Goods received, refund started: {{id}}' },
      st: { REQUESTED: 'Requested', APPROVED: 'Approved, waiting for the goods', REJECTED: 'Rejected', REFUNDING: 'Refunding', REFUNDED: 'Refunded' },
    },
    st: { PENDING: 'Pending', PAID: 'Paid', CANCELLED: 'Cancelled', REFUND_PENDING: 'Refund pending', REFUNDING: 'Refunding', REFUNDED: 'Refunded' },
  },
  refunds: {
    title: 'Refunds that need a person', hint: 'Refunds WeChat Pay refused (REFUSED) or stuck refunding: retry, or record money returned by hand', order: 'Order', outRefundNo: 'out_refund_no', amount: 'Amount', error: 'Error', resolution: 'Resolution',
    retry: 'Retry', settle: 'Settled by hand', retried: 'Asked WeChat Pay again', settled: 'Recorded as settled by hand', none: 'No refund needs a person', fromReconcile: 'Found by reconcile',
  },
  reconcile: {
    title: 'Reconcile', run: 'Run now', latest: 'Latest report', skusChecked: 'SKUs checked', duration: 'Took', clean: 'The books balance', differences: 'Differences', rule: 'Rule', expected: 'Expected', actual: 'Actual',
    overdue: 'Overdue orders', refundProblems: 'Refund problems', stuckRefunds: 'Stuck refunds', repaired: 'Repaired', none: 'No report yet', alerts: 'Differences past the threshold are posted to the team\'s chat',
  },
  errors: { SALE_IN_PROGRESS: 'Its queued sale is on: take it off sale first, then change this', ROLE_FORBIDDEN: 'Your role may not do this', UNAUTHORIZED: 'Your sign-in expired; sign in again', network: 'Network error; try again', generic: 'That failed' },
};
export default enUS;
