import { useCallback, useEffect, useState } from 'react';
import { Alert, Button, Card, DatePicker, Descriptions, Form, Input, InputNumber, Message, Modal, Popconfirm, Select, Space, Switch, Table, Tag } from '@arco-design/web-react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { aftersaleSteps, ApiError, newKey, when, yuan, type Aftersale, type AftersaleStep, type Line, type Order, type Receipt } from '../api';
import { useSession } from '../session';

const listable = ['PENDING_OVERDUE', 'REFUND_PENDING', 'REFUNDING'];

/**
 * Express companies by their WeChat code (express_company, the ids WeChat's
 * get_delivery_list answers); the field also takes any other code.
 */
export const carriers: [string, string][] = [
  ['SF', '顺丰速运 SF Express'], ['YTO', '圆通速递 YTO'], ['ZTO', '中通快递 ZTO'], ['STO', '申通快递 STO'],
  ['YUNDA', '韵达快递 Yunda'], ['JTSD', '极兔速递 J&T'], ['EMS', '中国邮政 EMS'], ['JD', '京东物流 JD Logistics'],
];

const statusColor: Record<string, string> = { PENDING: 'orange', PAID: 'green', CANCELLED: 'gray', REFUND_PENDING: 'red', REFUNDING: 'purple', REFUNDED: 'arcoblue' };

export function OrderStatus({ status }: { status: string }) {
  const { t } = useTranslation();
  return <Tag color={statusColor[status]} data-status={status}>{t('orders.st.' + status, { defaultValue: status })}</Tag>;
}

/** The orders page: find by id or list by status; an order with its payment, refunds, shipments, receipt and after-sales. */
export function Orders({ orderId }: { orderId: string }) {
  const { t, i18n } = useTranslation();
  const { go, api, fail } = useSession();
  const [status, setStatus] = useState<string>();
  const [by, setBy] = useState<string | { userId: string }>();
  const [list, setList] = useState<Order[]>([]);
  const [next, setNext] = useState('');
  const loadList = (b: string | { userId: string }, after = '') => {
    setBy(b);
    return api.orders(b, after).then((p) => { setList((l) => (after ? [...l, ...p.orders] : p.orders)); setNext(p.next ?? ''); }, fail);
  };
  return (
    <div>
      <h2>{t('orders.title')}</h2>
      <Space wrap style={{ marginBottom: 12 }}>
        <Input.Search id="order-search" placeholder={t('orders.orderId')} searchButton defaultValue={orderId} style={{ width: 320 }} onSearch={(v) => v.trim() && go('orders', v.trim())} />
        <Select placeholder={t('orders.byStatus')} style={{ width: 200 }} value={status} onChange={(s) => { setStatus(s); void loadList(s); go('orders'); }}>
          {listable.map((s) => <Select.Option key={s} value={s}>{t('orders.statusList.' + s)}</Select.Option>)}
        </Select>
        <Input.Search id="buyer-search" placeholder={t('orders.byBuyer')} searchButton style={{ width: 260 }}
          onSearch={(v) => { if (v.trim()) { setStatus(undefined); void loadList({ userId: v.trim() }); go('orders'); } }} />
      </Space>
      {orderId ? <OrderDetail id={orderId} /> : by && (
        <>
          <Table rowKey="orderId" data={list} pagination={false} scroll={{ x: 800 }} columns={[
            { title: t('orders.orderId'), dataIndex: 'orderId', render: (id: string) => <a href={'#/orders/' + id} className="mono">{id}</a> },
            { title: t('orders.buyer'), dataIndex: 'userId' },
            { title: t('orders.status'), dataIndex: 'status', render: (s: string) => <OrderStatus status={s} /> },
            { title: t('orders.amount'), dataIndex: 'amount', render: yuan },
            { title: t('orders.createdAt'), dataIndex: 'createdAt', render: (s: string) => when(s, i18n.language) },
          ]} />
          {next && <Button onClick={() => void loadList(by, next)}>{t('common.loadMore')}</Button>}
        </>
      )}
    </div>
  );
}

/** addressText is an address on one line, in the order a Chinese address is written. */
export function addressText(a: NonNullable<Order['address']>) {
  return [a.userName, a.telNumber, [a.provinceName, a.cityName, a.countyName, a.detailInfo].filter(Boolean).join(''), a.postalCode]
    .filter(Boolean).join(' · ');
}

function OrderDetail({ id }: { id: string }) {
  const { t, i18n } = useTranslation();
  const { api, fail } = useSession();
  const [order, setOrder] = useState<Order | null>(null);
  const [missing, setMissing] = useState(false);
  const [dialog, setDialog] = useState<'refund' | 'ship' | 'presale' | null>(null);
  const load = useCallback(() => {
    setMissing(false);
    api.order(id).then(setOrder, (e) => (e instanceof ApiError && e.status === 404 ? setMissing(true) : fail(e)));
  }, [api, fail, id]);
  useEffect(load, [load]);
  if (missing) return <Alert type="warning" content={t('orders.notFound') + ': ' + id} />;
  if (!order) return null;
  const done = () => { setDialog(null); load(); };
  return (
    <div className="stack" id="order-detail" data-order={order.orderId}>
      <Card title={<span className="mono">{order.orderId}</span>} extra={<Space wrap>
        <OrderStatus status={order.status} />
        <Button size="small" onClick={load}>{t('common.refresh')}</Button>
        <Button size="small" type="primary" id="refund-button" onClick={() => setDialog('refund')}>{t('orders.refund')}</Button>
        <Button size="small" type="primary" id="ship-button" onClick={() => setDialog('ship')}>{t('orders.ship')}</Button>
        <Button size="small" onClick={() => setDialog('presale')}>{t('orders.declarePresale')}</Button>
      </Space>}>
        <Descriptions column={{ xs: 1, md: 2 }} data={[
          { label: t('orders.buyer'), value: order.userId },
          ...(order.address ? [{ label: t('orders.address'), value: <span id="order-address">{addressText(order.address)}</span> }] : []),
          { label: t('orders.amount'), value: yuan(order.amount) },
          { label: t('orders.createdAt'), value: when(order.createdAt, i18n.language) },
          { label: t('orders.paidAt'), value: when(order.paidAt, i18n.language) },
          { label: t('orders.transactionId'), value: order.transactionId ?? '—' },
          { label: t('orders.shipments'), value: order.shipping ? `${order.shipping.status}${order.shipping.error ? ' · ' + order.shipping.error : ''}` : '—' },
          ...(order.receipt ? [{ label: t('orders.receipt'), value: <span id="order-receipt" data-receipt={order.receipt.status}>{receiptText(order.receipt, t, i18n.language)}</span> }] : []),
        ]} />
        <Table rowKey="skuId" size="small" pagination={false} data={order.items} columns={[
          { title: t('orders.lines'), dataIndex: 'skuId' }, { title: t('orders.qty'), dataIndex: 'qty' },
          { title: t('orders.unitPrice'), dataIndex: 'unitPrice', render: (p?: number) => (p === undefined ? '—' : yuan(p)) },
        ]} />
      </Card>
      <Card title={t('orders.refunds')} size="small" id="order-refunds">
        <Table rowKey="outRefundNo" size="small" pagination={false} data={order.refunds ?? []} scroll={{ x: 700 }} columns={[
          { title: 'out_refund_no', dataIndex: 'outRefundNo', render: (s: string) => <span className="mono">{s}</span> },
          { title: t('orders.lines'), dataIndex: 'lines', render: (ls: Line[]) => ls.map((l) => `${l.skuId}×${l.qty}`).join(', ') },
          { title: t('orders.amount'), dataIndex: 'amount', render: yuan },
          { title: t('orders.status'), dataIndex: 'status', render: (s: string) => <Tag>{s}</Tag> },
          { title: t('refunds.error'), dataIndex: 'error', render: (s?: string) => s ?? '' },
        ]} />
      </Card>
      <Card title={t('orders.shipments')} size="small" id="order-shipments">
        <Table rowKey="shipmentId" size="small" pagination={false} data={order.shipments ?? []} scroll={{ x: 600 }} columns={[
          { title: 'shipmentId', dataIndex: 'shipmentId' }, { title: t('orders.shipType'), dataIndex: 'type', render: (v: string) => t('orders.shipTypes.' + v, { defaultValue: v }) },
          { title: t('orders.carrier'), dataIndex: 'carrier' }, { title: t('orders.tracking'), dataIndex: 'tracking' },
          { title: t('orders.shipItems'), dataIndex: 'items', render: (ls?: Line[]) => (ls ?? []).map((l) => `${l.skuId}×${l.qty}`).join(', ') },
          { title: t('orders.uploadedAt'), dataIndex: 'uploadedAt', render: (s?: string) => when(s, i18n.language) },
        ]} />
        {order.presale && <p>{t('orders.presale')}: {new Date(order.presale.shipAt).toLocaleDateString()} · {order.presale.status}</p>}
      </Card>
      <Aftersales order={order} onDone={load} />
      {dialog === 'refund' && <RefundDialog order={order} onDone={done} onClose={() => setDialog(null)} />}
      {dialog === 'ship' && <ShipDialog order={order} onDone={done} onClose={() => setDialog(null)} />}
      {dialog === 'presale' && <PresaleDialog order={order} onDone={done} onClose={() => setDialog(null)} />}
    </div>
  );
}

/** receiptText is the order's receipt on one line: its status, and once confirmed when and by whom. */
export function receiptText(r: Receipt, t: TFunction, lang: string) {
  const st = t('orders.receiptSt.' + r.status, { defaultValue: r.status });
  return r.status === 'CONFIRMED' ? [st, when(r.confirmedAt, lang), r.method && t('orders.receiptBy.' + r.method, { defaultValue: r.method })].filter(Boolean).join(' · ') : st;
}

const aftersaleColor: Record<string, string> = { REQUESTED: 'orange', APPROVED: 'arcoblue', REJECTED: 'gray', REFUNDING: 'purple', REFUNDED: 'green' };

/** The order's after-sales with the steps each takes now (approve or reject a request, receive or reject an approved return). */
function Aftersales({ order, onDone }: { order: Order; onDone: () => void }) {
  const { t, i18n } = useTranslation();
  const { api, fail } = useSession();
  const [rejecting, setRejecting] = useState<Aftersale | null>(null);
  const [busy, setBusy] = useState('');
  const step = (a: Aftersale, s: AftersaleStep, reason?: string) => {
    setBusy(a.aftersaleId + '/' + s);
    return api.aftersale(order.orderId, a.aftersaleId, s, reason)
      .then(() => { Message.success(t('orders.as.done.' + s, { id: a.aftersaleId })); setRejecting(null); onDone(); }, fail)
      .finally(() => setBusy(''));
  };
  const button = (a: Aftersale, s: AftersaleStep) => {
    const b = <Button key={s} size="mini" type={s === 'reject' ? 'secondary' : 'primary'} status={s === 'reject' ? 'danger' : undefined}
      className={'aftersale-' + s} loading={busy === a.aftersaleId + '/' + s} onClick={s === 'reject' ? () => setRejecting(a) : undefined}>{t('orders.as.' + s)}</Button>;
    // Approving or receiving starts a refund: asked once more; rejecting asks its reason.
    return s === 'reject' ? b : <Popconfirm key={s} title={`${t('orders.as.' + s)}: ${a.aftersaleId}?`} onOk={() => step(a, s)}>{b}</Popconfirm>;
  };
  const lines = (ls: Line[]) => ls.map((l) => `${l.skuId}×${l.qty}`).join(', ');
  return (
    <Card title={t('orders.afterSales')} size="small" id="order-aftersales">
      <Table rowKey="aftersaleId" size="small" pagination={false} data={order.aftersales ?? []} scroll={{ x: 900 }} noDataElement={t('orders.as.none')} columns={[
        { title: t('orders.as.id'), dataIndex: 'aftersaleId', render: (s: string) => <span className="mono">{s}</span> },
        { title: t('orders.as.kind'), dataIndex: 'kind', render: (k: string) => t('orders.as.kinds.' + k, { defaultValue: k }) },
        { title: t('orders.lines'), dataIndex: 'lines', render: lines },
        { title: t('orders.as.reason'), dataIndex: 'reason', render: (r: string, a: Aftersale) => (a.rejectReason ? `${r} · ${t('orders.as.st.REJECTED')}: ${a.rejectReason}` : r) },
        { title: t('orders.status'), dataIndex: 'status', render: (s: string) => <Tag color={aftersaleColor[s]} data-status={s}>{t('orders.as.st.' + s, { defaultValue: s })}</Tag> },
        { title: t('orders.as.requestedAt'), dataIndex: 'requestedAt', render: (s: string) => when(s, i18n.language) },
        { title: t('orders.as.decidedAt'), dataIndex: 'decidedAt', render: (s?: string) => when(s, i18n.language) },
        { title: 'out_refund_no', dataIndex: 'outRefundNo', render: (s?: string) => <span className="mono">{s ?? ''}</span> },
        { title: '', render: (_: unknown, a: Aftersale) => <Space>{aftersaleSteps(a).map((s) => button(a, s))}</Space> },
      ]} />
      {rejecting && (
        <RejectDialog aftersale={rejecting} busy={busy !== ''} onOk={(reason) => void step(rejecting, 'reject', reason)} onClose={() => setRejecting(null)} />
      )}
    </Card>
  );
}

function RejectDialog({ aftersale, busy, onOk, onClose }: { aftersale: Aftersale; busy: boolean; onOk: (reason: string) => void; onClose: () => void }) {
  const { t } = useTranslation();
  const [reason, setReason] = useState('');
  return (
    <Modal title={`${t('orders.as.reject')}: ${aftersale.aftersaleId}`} visible onOk={() => onOk(reason.trim())} onCancel={onClose} confirmLoading={busy} okButtonProps={{ disabled: !reason.trim() }}>
      <Input id="aftersale-reject-reason" placeholder={t('orders.as.rejectReason')} value={reason} onChange={setReason} maxLength={200} />
    </Modal>
  );
}

interface DialogProps { order: Order; onDone: () => void; onClose: () => void }

function RefundDialog({ order, onDone, onClose }: DialogProps) {
  const { t } = useTranslation();
  const { api, fail } = useSession();
  const [qty, setQty] = useState<Record<string, number>>({});
  const [restock, setRestock] = useState(true);
  const [reason, setReason] = useState('');
  const [refundId, setRefundId] = useState(() => newKey('rf'));
  const [busy, setBusy] = useState(false);
  const lines = order.items.map((l) => ({ skuId: l.skuId, qty: qty[l.skuId] ?? 0 })).filter((l) => l.qty > 0);
  const ok = () => {
    setBusy(true);
    api.refund(order.orderId, { restock, reason, refundId, ...(lines.length ? { lines } : {}) })
      .then((o) => { Message.success(t('orders.refundDone', { no: o.refunds?.at(-1)?.outRefundNo ?? '' })); onDone(); }, fail)
      .finally(() => setBusy(false));
  };
  return (
    <Modal title={t('orders.refund')} visible onOk={ok} onCancel={onClose} confirmLoading={busy} okButtonProps={{ disabled: !reason }}>
      <div className="stack" id="refund-form">
        <div>{t('orders.refundLines')}</div>
        {order.items.map((l) => (
          <Space key={l.skuId}><span className="mono">{l.skuId}</span>
            <InputNumber id={'refund-qty-' + l.skuId} min={0} max={l.qty} precision={0} value={qty[l.skuId] ?? 0} onChange={(v) => setQty({ ...qty, [l.skuId]: v })} /> / {l.qty}
          </Space>
        ))}
        <Space>{t('orders.restock')}<Switch checked={restock} onChange={setRestock} /></Space>
        <Input placeholder={t('common.reason')} value={reason} onChange={setReason} id="refund-reason" />
        <Input addBefore={t('orders.refundId')} value={refundId} onChange={setRefundId} className="mono" />
      </div>
    </Modal>
  );
}

function ShipDialog({ order, onDone, onClose }: DialogProps) {
  const { t } = useTranslation();
  const { api, fail } = useSession();
  const [form] = Form.useForm();
  const [busy, setBusy] = useState(false);
  const [shipmentId] = useState(() => newKey('parcel'));
  const type = Form.useWatch('type', form) as string | undefined;
  const ok = async () => {
    const v = await form.validate();
    const items = order.items.map((l) => ({ skuId: l.skuId, qty: v['qty_' + l.skuId] ?? 0 })).filter((l) => l.qty > 0);
    const body: Record<string, unknown> = { shipmentId: v.shipmentId, type: v.type, ...(items.length ? { items } : {}) };
    if (v.type === 'express') Object.assign(body, { carrier: v.carrier, tracking: v.tracking, ...(v.contact ? { contact: v.contact } : {}) });
    setBusy(true);
    api.ship(order.orderId, body).then(() => { Message.success(t('orders.shipped', { id: v.shipmentId })); onDone(); }, fail).finally(() => setBusy(false));
  };
  return (
    <Modal title={t('orders.ship')} visible onOk={() => void ok()} onCancel={onClose} confirmLoading={busy}>
      <Form form={form} layout="vertical" initialValues={{ type: 'express', shipmentId }} id="ship-form">
        <Form.Item label={t('orders.shipType')} field="type"><Select options={['express', 'same-city', 'virtual', 'self-pickup'].map((v) => ({ value: v, label: t('orders.shipTypes.' + v) }))} /></Form.Item>
        {type === 'express' && <>
          <Form.Item label={t('orders.carrier')} field="carrier" rules={[{ required: true }]}>
            <Select id="ship-carrier" allowCreate showSearch options={carriers.map(([v, l]) => ({ value: v, label: l }))} />
          </Form.Item>
          <Form.Item label={t('orders.tracking')} field="tracking" rules={[{ required: true }]}><Input id="ship-tracking" /></Form.Item>
          <Form.Item label={t('orders.contact')} field="contact" extra={t('orders.contactHelp')}><Input /></Form.Item>
        </>}
        {order.items.map((l) => (
          <Form.Item key={l.skuId} label={`${t('orders.shipItems')}: ${l.skuId} (≤ ${l.qty})`} field={'qty_' + l.skuId}><InputNumber min={0} max={l.qty} precision={0} /></Form.Item>
        ))}
        <Form.Item label={'shipmentId (' + t('common.idempotencyKey') + ')'} field="shipmentId" rules={[{ required: true }]}><Input className="mono" /></Form.Item>
      </Form>
    </Modal>
  );
}

function PresaleDialog({ order, onDone, onClose }: DialogProps) {
  const { t } = useTranslation();
  const { api, fail } = useSession();
  const [at, setAt] = useState<string>();
  const ok = () => api.presale(order.orderId, new Date(at!).toISOString()).then(() => { Message.success(t('orders.declared')); onDone(); }, fail);
  return (
    <Modal title={t('orders.declarePresale')} visible onOk={() => void ok()} onCancel={onClose} okButtonProps={{ disabled: !at }}>
      {t('orders.shipAt')}: <DatePicker showTime value={at} onChange={(s) => setAt(s)} />
    </Modal>
  );
}
