// 中文（默认语言）。Every key here must be in en-US.ts too: its type is this object's.
const zhCN = {
  app: { title: 'stockguard 商家控制台', signOut: '退出登录', role: '角色', language: 'English', loading: '加载中…', signingIn: '正在登录…', signIn: '登录', signedOut: '请登录以管理店铺', readOnly: '只读' },
  roles: { owner: '店主', operator: '运营', viewer: '只读', none: '无角色' },
  nav: { skus: '商品库存', live: '实时销售', orders: '订单', refunds: '待处理退款', reconcile: '对账' },
  common: { refresh: '刷新', save: '保存', cancel: '取消', confirm: '确定', yes: '是', no: '否', none: '无', ok: '完成', reason: '原因', idempotencyKey: '幂等键', idempotencyHelp: '同一个键重复提交只生效一次', updated: '更新于', loadMore: '加载更多', notAllowed: '你的角色不能执行此操作', required: '必填' },
  skus: {
    title: '商品库存', create: '新建商品', skuId: '商品编号', name: '名称', price: '价格（元）', stock: '初始库存', limit: '每人限购', shards: '分片',
    onHand: '在库', available: '可售', reserved: '已预留', status: '状态', saleStartsAt: '开售时间', actions: '操作',
    restock: '补货', writeOff: '报损', units: '数量', adjustTitle: '{{kind}}：{{sku}}', sale: '开售设置', onSale: '上架',
    saleNow: '立即开售', saleAt: '定时开售', offSale: '下架', reshard: '重新分片', reshardHelp: '分片越多，热门商品每秒可承受的订单越多（1–64）',
    limitTitle: '每人限购：{{sku}}', limitHelp: '0 表示不限购', created: '已创建 {{sku}}', adjusted: '已{{kind}} {{qty}} 件（{{sku}}）', replayed: '此幂等键已提交过，未重复变更',
    resharded: '分片：{{shards}}（移动 {{moved}} 件{{more}}）', notComplete: '，仍有预留未迁移，请稍后再试', saved: '已保存',
    statuses: { ON_SALE: '在售', UPCOMING: '即将开售', SOLD_OUT: '售罄', OFF_SALE: '已下架' },
    queue: '排队购买', queueHelp: '买家先取号排队，轮到后凭资格下单', queueTitle: '排队设置：{{sku}}',
    queueBadge: '排队 · 公平窗口 {{s}} 秒', riskBadge: '风控 ≥{{n}}',
    fairWindow: '公平窗口（秒）', fairWindowHelp: '开售后这段时间内到达的买家随机排序（0–300，需开启排队）',
    riskThreshold: '风控阈值', riskHelp: '微信安全等级达到此值的买家被拒绝（1–4，0 表示不检查）',
  },
  live: {
    title: '实时销售', hint: '每 {{s}} 秒刷新；速率按两次刷新之间的库存变化计算（件/秒）', none: '没有在售或即将开售的商品',
    available: '可售', reservedRate: '下单 件/秒', paidRate: '支付 件/秒', releasedRate: '释放 件/秒', pending: '待支付（已预留）', sold: '本页打开后售出',
    limits: '最接近上限', shardLoad: '分片写入', shardLoadHelp: '每个分片每秒最多 1000 次写入（DynamoDB 分区上限）', stockLeft: '在库已被预留', refusals: '拒单/秒',
    refusalsHelp: '拒单不改动数据库，速率见 CloudWatch 面板（OperationsDashboard）', lastOrders: '刚到的订单',
  },
  orders: {
    title: '订单', search: '查找订单', byId: '按订单号', byStatus: '按状态', orderId: '订单号', buyer: '买家', status: '状态', amount: '金额', createdAt: '下单时间', paidAt: '支付时间',
    lines: '商品', qty: '数量', unitPrice: '单价', payment: '支付', transactionId: '微信支付单号', refunds: '退款', shipments: '发货', presale: '预售',
    notFound: '没有这个订单', refund: '部分退款', refundAll: '全额退款', restock: '退回库存', refundLines: '退款商品', refundId: '退款单号（幂等键）', refundDone: '退款已提交：{{no}}',
    ship: '发货', shipType: '方式', carrier: '快递公司', tracking: '运单号', contact: '联系电话（打码）', contactHelp: '顺丰必填，如 189****1234', shipItems: '本次发货', shipped: '已发货：{{id}}',
    shipAt: '预计发货时间', declarePresale: '申报预售', declared: '已申报预售', byBuyer: '按买家（用户 id）', address: '收货地址',
    statusList: { PENDING_OVERDUE: '超时未支付', REFUND_PENDING: '待退款', REFUNDING: '退款中' },
    shipTypes: { express: '快递', 'same-city': '同城配送', virtual: '虚拟发货', 'self-pickup': '自提' },
    uploadedAt: '已上传微信', receipt: '确认收货', receiptSt: { WAITING: '待买家确认收货', CONFIRMED: '已确认收货' }, receiptBy: { buyer: '买家确认', auto: '微信自动确认' },
    afterSales: '售后申请', as: {
      id: '售后单号', kind: '类型', kinds: { refund: '仅退款', 'return-refund': '退货退款' }, reason: '原因', requestedAt: '申请时间', decidedAt: '处理时间', receivedAt: '收到退货',
      none: '没有售后申请', approve: '同意', reject: '拒绝', received: '已收到退货', rejectReason: '拒绝原因（会告知买家）',
      done: { approve: '已同意售后 {{id}}', reject: '已拒绝售后 {{id}}', received: '已收到退货，开始退款：{{id}}' },
      st: { REQUESTED: '待处理', APPROVED: '已同意，待退货', REJECTED: '已拒绝', REFUNDING: '退款中', REFUNDED: '已退款' },
    },
    st: { PENDING: '待支付', PAID: '已支付', CANCELLED: '已取消', REFUND_PENDING: '待退款', REFUNDING: '退款中', REFUNDED: '已退款' },
  },
  refunds: {
    title: '需要人工处理的退款', hint: '微信支付拒绝（REFUSED）或卡在退款中的退款；重试或记录线下已退', order: '订单', outRefundNo: '退款单号', amount: '金额', error: '错误', resolution: '处理',
    retry: '重试', settle: '已线下退款', retried: '已重新发起', settled: '已记录为线下退款', none: '没有需要处理的退款', fromReconcile: '对账发现的问题',
  },
  reconcile: {
    title: '对账', run: '立即对账', latest: '最近一次报告', skusChecked: '核对商品数', duration: '耗时', clean: '账实相符', differences: '差异', rule: '规则', expected: '应为', actual: '实际',
    overdue: '超时未释放的订单', refundProblems: '退款问题', stuckRefunds: '卡住的退款', repaired: '已修复', none: '暂无报告', alerts: '超过阈值的差异会发送到团队群（告警群）',
  },
  errors: { SALE_IN_PROGRESS: '排队开售进行中：请先下架再修改', ROLE_FORBIDDEN: '你的角色不能执行此操作', UNAUTHORIZED: '登录已失效，请重新登录', network: '网络错误，请重试', generic: '操作失败' },
};
export default zhCN;
export type Messages = typeof zhCN;
