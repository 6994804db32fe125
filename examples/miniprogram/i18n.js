// Every string the buyer reads, in one place: Simplified Chinese (zh_CN, the default) and
// English (en), the locale chosen by config.js `locale`. Pages put the table in their
// data as `t` for the templates ({{t.placeOrder}}); code asks t(key, params), where
// {name} in a string is replaced by params.name. Both tables have the same keys (a test
// checks it).
'use strict';
const config = require('./config.js');

/** @typedef {Record<string, string>} Table */

/** @type {Record<string, Table>} */
const TABLES = {
  zh_CN: {
    // tabs and titles
    tabShop: '商城', tabCart: '购物车', tabOrders: '我的订单',
    // SKUs
    notOnSale: '已下架', soldOut: '已售罄', soonForSale: '即将开售 {n} 件', onlyLeft: '仅剩 {n} 件',
    left: '剩余 {n} 件', limitPerUser: '每人限购 {n} 件', saleStartsIn: '距开售 {time}',
    buyNow: '立即购买', addToCart: '加入购物车', addedToCart: '已加入购物车',
    nothingOnSale: '暂无在售商品', more: '加载更多', thatIsAll: '没有更多了',
    // the waiting room and the waitlist
    queuePlacing: '正在为你排队…', queuePosition: '你排在第 {n} 位', queueWait: '预计等待 {time}',
    queueAdmitted: '轮到你了，请在 {time} 内下单', queueSoldOut: '已售罄，排队结束。',
    queueExpired: '你的购买资格已过期。', notifyMe: '到货提醒', leaveWaitlist: '取消提醒',
    waitlistWAITING: '已登记到货提醒：有人退货或取消时，按登记顺序为你保留。',
    waitlistHELD: '已为你保留 {n} 件，请在 {time} 内购买', waitlistPASSED: '为你保留的商品已过期，名额已给下一位。',
    waitlistDONE: '你已用保留的名额下单。',
    // cart
    cartEmpty: '购物车是空的', remove: '删除', total: '合计', placeOrder: '提交订单',
    overAvailable: '库存不足，最多可买 {n} 件', cannotBuy: '暂不可购买',
    chooseAddress: '选择收货地址', changeAddress: '更换', addressNeeded: '请先选择收货地址',
    addressDeniedTitle: '需要收货地址权限', addressDenied: '你曾拒绝提供收货地址。请在设置中允许“通讯地址”，再选择收货地址。',
    goToSettings: '去设置',
    // orders
    noOrders: '还没有订单', noOrdersInTab: '这里没有订单',
    tabAll: '全部', tabPending: '待付款', tabToShip: '待发货', tabToReceive: '待收货', tabAftersale: '售后',
    statusPENDING: '待付款', statusPAID: '已付款', statusCANCELLED: '已取消',
    statusREFUND_PENDING: '已付款，商家待退款', statusREFUNDING: '退款中', statusREFUNDED: '已退款',
    toShip: '待发货', toReceive: '待收货', received: '已收货', receivedAt: '已于 {time} 确认收货',
    order: '订单 {id}', placed: '下单时间 {time}', refunded: '已退款', refundLine: '退款 ¥{amount}：{status}',
    consignee: '收货人', parcelPath: '物流信息', shipment: '{carrier} {tracking}', uploadedAt: '发货时间 {time}',
    shipTypeExpress: '快递', shipTypeSameCity: '同城配送', shipTypeVirtual: '虚拟发货', shipTypeSelfPickup: '用户自提',
    pay: '去付款', cancelOrder: '取消订单', refund: '退款', confirmReceipt: '确认收货', applyAftersale: '申请售后',
    cancelTitle: '取消这个订单？', cancelContent: '商品将重新上架。',
    refundTitle: '退款？', refundContent: '¥{amount} 将退回你的微信支付。',
    upgradeWeChat: '请升级微信到最新版本后再确认收货。',
    aftersaleLine: '售后 {kind}：{status}',
    aftersaleREQUESTED: '待商家处理', aftersaleAPPROVED: '商家已同意，请寄回商品', aftersaleREJECTED: '商家已拒绝',
    aftersaleREFUNDING: '退款中', aftersaleREFUNDED: '已退款',
    // pay
    payWithWeChat: '微信支付', payWithin: '请在 {time} 内付款', paymentConfirming: '已付款，商家正在确认。',
    paymentNotCompleted: '未完成付款。',
    // after-sale
    aftersaleTitle: '申请售后', kindRefund: '仅退款', kindReturnRefund: '退货退款',
    reason: '原因', reasonPlaceholder: '请说明原因', submit: '提交申请',
    chooseLines: '请选择要售后的商品', reasonNeeded: '请填写原因', aftersaleKind: '售后类型',
    // refusals
    STOCK_OUT: '库存不足，无法购买这么多。',
    LIMIT_EXCEEDED: '已达到该商品的限购数量。',
    RISK_REJECTED: '微信安全评估未通过，无法购买该商品。',
    SALE_NOT_STARTED: '还未开售。',
    ADMISSION_REQUIRED: '该商品需排队购买：轮到你后请在限定时间内下单，每次排队只能下一单。',
    QUEUE_NOT_ENABLED: '该商品无需排队，可直接购买。',
    TICKET_NOT_FOUND: '找不到你的排队号，请重新排队。',
    WAITLIST_NOT_FOUND: '你还没有登记到货提醒。',
    SKU_OFF_SALE: '该商品已下架。',
    SKU_NOT_FOUND: '该商品不存在。',
    CART_TOO_LARGE: '一单的商品太多，请分开下单。',
    IDEMPOTENCY_KEY_REUSED: '订单在提交时有变化，请重试。',
    ORDER_NOT_PAYABLE: '该订单已无法付款。',
    ORDER_NOT_CANCELLABLE: '该订单已付款，无法取消。',
    ORDER_NOT_FOUND: '订单不存在。',
    REFUND_NOT_ALLOWED: '该订单已无法在这里退款，请申请售后或联系商家。',
    ADDRESS_LOCKED: '订单已发货或已关闭，收货地址无法再修改。',
    REFUND_EXCEEDS_PAID: '超出可退的数量：已付款的部分已经退过了。',
    PAYMENT_REFUSED: '微信支付拒绝了这笔付款。',
    INVALID_REQUEST: '提交的内容有误：{message}',
    busy: '当前人数较多，请{wait}再试。', busyIn: '{n} 秒后', busyMoment: '稍后',
    signInFailed: '登录失败，请重试。', offline: '无法连接到商城，请检查网络后重试。',
  },
  en: {
    tabShop: 'Shop', tabCart: 'Cart', tabOrders: 'My orders',
    notOnSale: 'Not on sale', soldOut: 'Sold out', soonForSale: '{n} for sale soon', onlyLeft: 'Only {n} left',
    left: '{n} left', limitPerUser: 'At most {n} per buyer', saleStartsIn: 'Sale starts in {time}',
    buyNow: 'Buy now', addToCart: 'Add to cart', addedToCart: 'Added to the cart',
    nothingOnSale: 'Nothing on sale right now.', more: 'More', thatIsAll: 'That is all.',
    queuePlacing: 'Finding your place in line…', queuePosition: 'You are number {n} in line', queueWait: 'About {time} to wait',
    queueAdmitted: 'Your turn: order within {time}', queueSoldOut: 'Sold out: the queue has ended.',
    queueExpired: 'Your turn ran out before you ordered.', notifyMe: 'Notify me', leaveWaitlist: 'Leave the waitlist',
    waitlistWAITING: 'On the waitlist: units that come back are held for buyers in the order they joined.',
    waitlistHELD: '{n} held for you: buy within {time}', waitlistPASSED: 'Your hold ran out and went to the next buyer.',
    waitlistDONE: 'You ordered with your hold.',
    cartEmpty: 'Your cart is empty.', remove: 'Remove', total: 'Total', placeOrder: 'Place order',
    overAvailable: 'Not enough left: at most {n}', cannotBuy: 'Cannot be bought now',
    chooseAddress: 'Choose a delivery address', changeAddress: 'Change', addressNeeded: 'Choose a delivery address first.',
    addressDeniedTitle: 'Address permission needed', addressDenied: 'You declined to share an address. Allow "Address" in the settings, then choose one.',
    goToSettings: 'Settings',
    noOrders: 'No orders yet.', noOrdersInTab: 'No orders here.',
    tabAll: 'All', tabPending: 'To pay', tabToShip: 'To ship', tabToReceive: 'To receive', tabAftersale: 'After-sale',
    statusPENDING: 'Awaiting payment', statusPAID: 'Paid', statusCANCELLED: 'Cancelled',
    statusREFUND_PENDING: 'Paid; the shop owes a refund', statusREFUNDING: 'Refund under way', statusREFUNDED: 'Refunded',
    toShip: 'To be shipped', toReceive: 'On its way', received: 'Received', receivedAt: 'Receipt confirmed {time}',
    order: 'Order {id}', placed: 'Placed {time}', refunded: 'Refunded', refundLine: 'Refund ¥{amount}: {status}',
    consignee: 'Deliver to', parcelPath: 'Parcels', shipment: '{carrier} {tracking}', uploadedAt: 'Shipped {time}',
    shipTypeExpress: 'Express', shipTypeSameCity: 'Same-city delivery', shipTypeVirtual: 'Virtual', shipTypeSelfPickup: 'Self pickup',
    pay: 'Pay', cancelOrder: 'Cancel order', refund: 'Refund', confirmReceipt: 'Confirm receipt', applyAftersale: 'After-sale',
    cancelTitle: 'Cancel this order?', cancelContent: 'Its items go back on sale.',
    refundTitle: 'Refund this order?', refundContent: '¥{amount} goes back to your WeChat Pay.',
    upgradeWeChat: 'Please update WeChat to confirm receipt.',
    aftersaleLine: 'After-sale {kind}: {status}',
    aftersaleREQUESTED: 'waiting for the shop', aftersaleAPPROVED: 'approved: send the goods back', aftersaleREJECTED: 'rejected by the shop',
    aftersaleREFUNDING: 'refund under way', aftersaleREFUNDED: 'refunded',
    payWithWeChat: 'Pay with WeChat', payWithin: 'Pay within {time}', paymentConfirming: 'Payment made; the shop is confirming it.',
    paymentNotCompleted: 'Payment not completed.',
    aftersaleTitle: 'After-sale request', kindRefund: 'Refund only', kindReturnRefund: 'Return and refund',
    reason: 'Reason', reasonPlaceholder: 'Tell the shop why', submit: 'Send request',
    chooseLines: 'Choose what the request is for.', reasonNeeded: 'Give a reason.', aftersaleKind: 'Kind',
    STOCK_OUT: 'Sold out: not enough left for this quantity.',
    LIMIT_EXCEEDED: 'You have reached the purchase limit for this item.',
    RISK_REJECTED: 'WeChat\'s security check of your account does not allow buying this item.',
    SALE_NOT_STARTED: 'The sale has not started yet.',
    ADMISSION_REQUIRED: 'This item sells through a queue: order when it is your turn, one order a turn.',
    QUEUE_NOT_ENABLED: 'This item needs no queue: buy it directly.',
    TICKET_NOT_FOUND: 'Your place in line was not found; please queue again.',
    WAITLIST_NOT_FOUND: 'You are not on the waitlist.',
    SKU_OFF_SALE: 'This item is no longer on sale.',
    SKU_NOT_FOUND: 'This item does not exist.',
    CART_TOO_LARGE: 'Too many items in one order; please order fewer.',
    IDEMPOTENCY_KEY_REUSED: 'This order changed while it was being sent; please try again.',
    ORDER_NOT_PAYABLE: 'This order can no longer be paid.',
    ORDER_NOT_CANCELLABLE: 'This order is paid and can no longer be cancelled.',
    ORDER_NOT_FOUND: 'Order not found.',
    REFUND_NOT_ALLOWED: 'This order can no longer be refunded here; ask for an after-sale or contact the shop.',
    ADDRESS_LOCKED: 'The order has shipped or is closed: its address can no longer be changed.',
    REFUND_EXCEEDS_PAID: 'More than is left to refund: what was paid has been refunded already.',
    PAYMENT_REFUSED: 'WeChat Pay refused this payment.',
    INVALID_REQUEST: 'Something in the request is wrong: {message}',
    busy: 'The shop is very busy; please try again {wait}.', busyIn: 'in {n} s', busyMoment: 'in a moment',
    signInFailed: 'Could not sign you in; please try again.', offline: 'No connection to the shop; check the network and try again.',
  },
};

/** The locale used when config.js names none or one without a table. */
const DEFAULT_LOCALE = 'zh_CN';

let current = TABLES[config.locale] ? config.locale : DEFAULT_LOCALE;

/**
 * setLocale switches the strings ('zh_CN' or 'en'); an unknown name keeps the default.
 * Pages read their table when they load, so switch before opening them.
 * @param {string} name
 */
function setLocale(name) {
  current = TABLES[name] ? name : DEFAULT_LOCALE;
}

/** @returns {Table} the current locale's table, for a page's data (`t`) */
function strings() {
  return TABLES[current];
}

/**
 * t is the string key in the current locale with {name} replaced by params.name; the
 * key itself when no table has it.
 * @param {string} key
 * @param {Record<string, string | number>} [params]
 * @returns {string}
 */
function t(key, params = {}) {
  const s = TABLES[current][key];
  if (s === undefined) return key;
  return s.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

/**
 * has: whether the current locale has a string for key (the API's error codes).
 * @param {string} key
 * @returns {boolean}
 */
function has(key) {
  return key in TABLES[current];
}

module.exports = { TABLES, DEFAULT_LOCALE, setLocale, strings, t, has };
