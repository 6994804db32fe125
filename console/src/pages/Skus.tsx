import { useCallback, useEffect, useState } from 'react';
import { Button, DatePicker, Form, Input, InputNumber, Message, Modal, Radio, Space, Switch, Table, Tag } from '@arco-design/web-react';
import { useTranslation } from 'react-i18next';
import { newKey, when, yuan, type Sku } from '../api';
import { useSession } from '../session';

type Dialog =
  | { kind: 'create' }
  | { kind: 'adjust'; sku: Sku; writeOff: boolean }
  | { kind: 'sale' | 'limit' | 'reshard' | 'queue'; sku: Sku };

const statusColor: Record<string, string> = { ON_SALE: 'green', UPCOMING: 'arcoblue', SOLD_OUT: 'red', OFF_SALE: 'gray' };

/** QueueBadge: the SKU's waiting room (with its fair window) and risk threshold, or a dash. */
export function QueueBadge({ sku }: { sku: Sku }) {
  const { t } = useTranslation();
  if (!sku.queue && !sku.riskThreshold) return <span data-queue="off">—</span>;
  return (
    <Space size="mini" data-queue={sku.queue ? 'on' : 'off'}>
      {sku.queue && <Tag color="purple">{t('skus.queueBadge', { s: sku.fairWindowSeconds ?? 0 })}</Tag>}
      {!!sku.riskThreshold && <Tag color="orange">{t('skus.riskBadge', { n: sku.riskThreshold })}</Tag>}
    </Space>
  );
}

export function SkuStatus({ status }: { status: string }) {
  const { t } = useTranslation();
  return <Tag color={statusColor[status]} data-status={status}>{t('skus.statuses.' + status, { defaultValue: status })}</Tag>;
}

/** The SKUs page: every SKU with its counters; create, restock / write off, sale time, limit, reshard. */
export function Skus() {
  const { t, i18n } = useTranslation();
  const { api, fail } = useSession();
  const [skus, setSkus] = useState<Sku[]>([]);
  const [loading, setLoading] = useState(false);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const load = useCallback(() => {
    setLoading(true);
    api.allSkus().then(setSkus, fail).finally(() => setLoading(false));
  }, [api, fail]);
  useEffect(load, [load]);
  const done = () => { setDialog(null); load(); };
  const columns = [
    { title: t('skus.skuId'), dataIndex: 'skuId', fixed: 'left' as const, width: 120 },
    { title: t('skus.name'), dataIndex: 'name', width: 160 },
    { title: t('skus.price'), dataIndex: 'price', width: 110, render: (p: number) => yuan(p) },
    { title: t('skus.status'), dataIndex: 'status', render: (s: string) => <SkuStatus status={s} /> },
    { title: t('skus.onHand'), dataIndex: 'onHand' },
    { title: t('skus.available'), dataIndex: 'available' },
    { title: t('skus.reserved'), dataIndex: 'reserved' },
    { title: t('skus.saleStartsAt'), dataIndex: 'saleStartsAt', width: 180, render: (s?: string) => when(s, i18n.language) },
    { title: t('skus.limit'), dataIndex: 'limitPerUser', render: (n: number) => n || '—' },
    { title: t('skus.shards'), dataIndex: 'shards' },
    { title: t('skus.queue'), key: 'queue', width: 220, render: (_: unknown, s: Sku) => <QueueBadge sku={s} /> },
    {
      title: t('skus.actions'), key: 'actions', width: 400,
      render: (_: unknown, s: Sku) => (
        <Space size="mini" wrap>
          <Button size="mini" type="primary" data-action="restock" onClick={() => setDialog({ kind: 'adjust', sku: s, writeOff: false })}>{t('skus.restock')}</Button>
          <Button size="mini" data-action="write-off" onClick={() => setDialog({ kind: 'adjust', sku: s, writeOff: true })}>{t('skus.writeOff')}</Button>
          <Button size="mini" data-action="sale" onClick={() => setDialog({ kind: 'sale', sku: s })}>{t('skus.sale')}</Button>
          <Button size="mini" data-action="limit" onClick={() => setDialog({ kind: 'limit', sku: s })}>{t('skus.limit')}</Button>
          <Button size="mini" data-action="reshard" onClick={() => setDialog({ kind: 'reshard', sku: s })}>{t('skus.reshard')}</Button>
          <Button size="mini" data-action="queue" onClick={() => setDialog({ kind: 'queue', sku: s })}>{t('skus.queue')}</Button>
        </Space>
      ),
    },
  ];
  return (
    <div>
      <Space style={{ marginBottom: 12 }}>
        <h2>{t('skus.title')}</h2>
        <Button type="primary" id="create-sku" onClick={() => setDialog({ kind: 'create' })}>{t('skus.create')}</Button>
        <Button onClick={load}>{t('common.refresh')}</Button>
      </Space>
      <Table rowKey="skuId" loading={loading} columns={columns} data={skus} pagination={false} scroll={{ x: 1600 }} border={false} />
      {dialog?.kind === 'create' && <CreateSku onDone={done} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'adjust' && <Adjust sku={dialog.sku} writeOff={dialog.writeOff} onDone={done} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'sale' && <SaleTime sku={dialog.sku} onDone={done} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'limit' && <Limit sku={dialog.sku} onDone={done} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'reshard' && <Reshard sku={dialog.sku} onDone={done} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'queue' && <QueueSettings sku={dialog.sku} onDone={done} onClose={() => setDialog(null)} />}
    </div>
  );
}

interface DialogProps { onDone: () => void; onClose: () => void }

/** useSubmit runs a change once at a time and reports its failure. */
function useSubmit(): [boolean, (run: () => Promise<void>) => void] {
  const { fail } = useSession();
  const [busy, setBusy] = useState(false);
  return [busy, (run) => {
    setBusy(true);
    run().catch(fail).finally(() => setBusy(false));
  }];
}

function CreateSku({ onDone, onClose }: DialogProps) {
  const { t } = useTranslation();
  const { api } = useSession();
  const [form] = Form.useForm();
  const [busy, submit] = useSubmit();
  const ok = () => submit(async () => {
    const v = await form.validate();
    const body: Record<string, unknown> = { skuId: v.skuId, name: v.name, price: Math.round(v.price * 100), stock: v.stock ?? 0 };
    if (v.limitPerUser) body.limitPerUser = v.limitPerUser;
    if (v.shards) body.shards = v.shards;
    if (v.saleStartsAt) body.saleStartsAt = new Date(v.saleStartsAt).toISOString();
    body.onSale = v.onSale ?? true;
    Object.assign(body, queueBody(v));
    const sku = await api.createSku(body);
    Message.success(t('skus.created', { sku: sku.skuId }));
    onDone();
  });
  return (
    <Modal title={t('skus.create')} visible onOk={ok} onCancel={onClose} confirmLoading={busy}>
      <Form form={form} layout="vertical" initialValues={{ onSale: true, stock: 0, queue: false, fairWindowSeconds: 0, riskThreshold: 0 }} id="create-sku-form">
        <Form.Item label={t('skus.skuId')} field="skuId" rules={[{ required: true, match: /^[0-9A-Za-z_.:-]{1,64}$/ }]}><Input id="sku-id" /></Form.Item>
        <Form.Item label={t('skus.name')} field="name" rules={[{ required: true }]}><Input id="sku-name" /></Form.Item>
        <Form.Item label={t('skus.price')} field="price" rules={[{ required: true }]}><InputNumber id="sku-price" min={0.01} precision={2} /></Form.Item>
        <Form.Item label={t('skus.stock')} field="stock"><InputNumber id="sku-stock" min={0} precision={0} /></Form.Item>
        <Form.Item label={t('skus.limit')} field="limitPerUser" extra={t('skus.limitHelp')}><InputNumber id="sku-limit" min={0} precision={0} /></Form.Item>
        <Form.Item label={t('skus.shards')} field="shards" extra={t('skus.reshardHelp')}><InputNumber min={1} max={64} precision={0} /></Form.Item>
        <Form.Item label={t('skus.saleStartsAt')} field="saleStartsAt"><DatePicker showTime style={{ width: '100%' }} /></Form.Item>
        <Form.Item label={t('skus.onSale')} field="onSale" triggerPropName="checked"><Switch id="sku-onsale" /></Form.Item>
        <QueueFields />
      </Form>
    </Modal>
  );
}

function Adjust({ sku, writeOff, onDone, onClose }: DialogProps & { sku: Sku; writeOff: boolean }) {
  const { t } = useTranslation();
  const { api } = useSession();
  const [form] = Form.useForm();
  const [busy, submit] = useSubmit();
  const kind = writeOff ? t('skus.writeOff') : t('skus.restock');
  // One key per dialog: sending again after a lost answer applies the adjustment once.
  const [key] = useState(() => newKey(writeOff ? 'writeoff' : 'restock'));
  const ok = () => submit(async () => {
    const v = await form.validate();
    const r = await api.adjust(sku.skuId, { adjustmentId: v.adjustmentId, delta: writeOff ? -v.units : v.units, reason: v.reason });
    if (r.replayed) Message.info(t('skus.replayed'));
    else Message.success(t('skus.adjusted', { kind, qty: v.units, sku: sku.skuId }));
    onDone();
  });
  return (
    <Modal title={t('skus.adjustTitle', { kind, sku: sku.skuId })} visible onOk={ok} onCancel={onClose} confirmLoading={busy}>
      <Form form={form} layout="vertical" initialValues={{ adjustmentId: key }} id="adjust-form">
        <Form.Item label={t('skus.units')} field="units" rules={[{ required: true }]}><InputNumber id="adjust-units" min={1} precision={0} /></Form.Item>
        <Form.Item label={t('common.reason')} field="reason" rules={[{ required: true }]}><Input id="adjust-reason" /></Form.Item>
        <Form.Item label={t('common.idempotencyKey')} field="adjustmentId" extra={t('common.idempotencyHelp')} rules={[{ required: true }]}><Input className="mono" /></Form.Item>
      </Form>
    </Modal>
  );
}

function SaleTime({ sku, onDone, onClose }: DialogProps & { sku: Sku }) {
  const { t } = useTranslation();
  const { api } = useSession();
  const [mode, setMode] = useState<'now' | 'at' | 'off'>(sku.onSale ? 'at' : 'off');
  const [at, setAt] = useState<string | undefined>(sku.saleStartsAt);
  const [busy, submit] = useSubmit();
  const ok = () => submit(async () => {
    const body = mode === 'off' ? { onSale: false } : { onSale: true, saleStartsAt: mode === 'now' ? new Date().toISOString() : new Date(at!).toISOString() };
    await api.patchSku(sku.skuId, body);
    Message.success(t('skus.saved'));
    onDone();
  });
  return (
    <Modal title={t('skus.sale') + ': ' + sku.skuId} visible onOk={ok} onCancel={onClose} confirmLoading={busy} okButtonProps={{ disabled: mode === 'at' && !at }}>
      <div className="stack" id="sale-form">
        <Radio.Group value={mode} onChange={setMode} type="button">
          <Radio value="now" data-mode="now">{t('skus.saleNow')}</Radio>
          <Radio value="at">{t('skus.saleAt')}</Radio>
          <Radio value="off">{t('skus.offSale')}</Radio>
        </Radio.Group>
        {mode === 'at' && <DatePicker showTime value={at} onChange={(s) => setAt(s)} />}
      </div>
    </Modal>
  );
}

function Limit({ sku, onDone, onClose }: DialogProps & { sku: Sku }) {
  const { t } = useTranslation();
  const { api } = useSession();
  const [n, setN] = useState<number>(sku.limitPerUser);
  const [busy, submit] = useSubmit();
  const ok = () => submit(async () => {
    await api.patchSku(sku.skuId, { limitPerUser: n });
    Message.success(t('skus.saved'));
    onDone();
  });
  return (
    <Modal title={t('skus.limitTitle', { sku: sku.skuId })} visible onOk={ok} onCancel={onClose} confirmLoading={busy}>
      <InputNumber min={0} precision={0} value={n} onChange={setN} /> <span>{t('skus.limitHelp')}</span>
    </Modal>
  );
}

function Reshard({ sku, onDone, onClose }: DialogProps & { sku: Sku }) {
  const { t } = useTranslation();
  const { api } = useSession();
  const [n, setN] = useState<number>(sku.shards);
  const [busy, submit] = useSubmit();
  const ok = () => submit(async () => {
    const r = await api.reshard(sku.skuId, n);
    Message.success(t('skus.resharded', { shards: r.shards, moved: r.moved, more: r.complete ? '' : t('skus.notComplete') }));
    onDone();
  });
  return (
    <Modal title={t('skus.reshard') + ': ' + sku.skuId} visible onOk={ok} onCancel={onClose} confirmLoading={busy}>
      <InputNumber min={1} max={64} precision={0} value={n} onChange={setN} />
      <p>{t('skus.reshardHelp')}</p>
    </Modal>
  );
}

interface QueueValues { queue?: boolean; fairWindowSeconds?: number; riskThreshold?: number }

/** queueBody: the waiting room's fields of a SKU body, as POST and PATCH /admin/skus take them (a fair window only with the queue). */
export function queueBody(v: QueueValues): Required<QueueValues> {
  const queue = !!v.queue;
  return { queue, fairWindowSeconds: queue ? v.fairWindowSeconds ?? 0 : 0, riskThreshold: v.riskThreshold ?? 0 };
}

/** QueueFields: the waiting room's form fields (queue, fair window, risk threshold), for a Form whose values include them. */
function QueueFields() {
  const { t } = useTranslation();
  return (
    <>
      <Form.Item label={t('skus.queue')} field="queue" triggerPropName="checked" extra={t('skus.queueHelp')}><Switch id="sku-queue" /></Form.Item>
      <Form.Item shouldUpdate noStyle>
        {(values: QueueValues) => (
          <Form.Item label={t('skus.fairWindow')} field="fairWindowSeconds" extra={t('skus.fairWindowHelp')}>
            <InputNumber id="sku-fair-window" min={0} max={300} precision={0} disabled={!values.queue} />
          </Form.Item>
        )}
      </Form.Item>
      <Form.Item label={t('skus.riskThreshold')} field="riskThreshold" extra={t('skus.riskHelp')}><InputNumber id="sku-risk" min={0} max={4} precision={0} /></Form.Item>
    </>
  );
}

function QueueSettings({ sku, onDone, onClose }: DialogProps & { sku: Sku }) {
  const { t } = useTranslation();
  const { api } = useSession();
  const [form] = Form.useForm();
  const [busy, submit] = useSubmit();
  const ok = () => submit(async () => {
    await api.patchSku(sku.skuId, queueBody(await form.validate()));
    Message.success(t('skus.saved'));
    onDone();
  });
  return (
    <Modal title={t('skus.queueTitle', { sku: sku.skuId })} visible onOk={ok} onCancel={onClose} confirmLoading={busy}>
      <Form form={form} layout="vertical" id="queue-form"
        initialValues={{ queue: !!sku.queue, fairWindowSeconds: sku.fairWindowSeconds ?? 0, riskThreshold: sku.riskThreshold ?? 0 }}>
        <QueueFields />
      </Form>
    </Modal>
  );
}
