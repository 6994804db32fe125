import { useCallback, useEffect, useState } from 'react';
import { Button, Empty, Input, Message, Modal, Space, Table, Tag, Typography } from '@arco-design/web-react';
import { useTranslation } from 'react-i18next';
import { yuan, type Order, type Refund } from '../api';
import { useSession } from '../session';

interface Row { order: Order; refund: Refund }

/**
 * Refunds that need a person: every refund with an error (REFUSED by WeChat Pay's
 * refund API, CLOSED, ABNORMAL) of the orders REFUNDING or REFUND_PENDING, and what
 * the latest reconcile found (refund problems, refunds stuck REFUNDING); each can be
 * retried or recorded as settled by hand.
 */
export function Refunds() {
  const { t } = useTranslation();
  const { api, fail } = useSession();
  const [rows, setRows] = useState<Row[]>([]);
  const [found, setFound] = useState<string[]>([]);
  const [acting, setActing] = useState<{ row: Row; action: 'retry' | 'settle' } | null>(null);
  const load = useCallback(async () => {
    try {
      const out: Row[] = [];
      for (const status of ['REFUNDING', 'REFUND_PENDING']) {
        let next = '';
        do {
          const page = await api.orders(status, next);
          for (const o of page.orders) for (const r of o.refunds ?? []) if (r.error) out.push({ order: o, refund: r });
          next = page.next ?? '';
        } while (next);
      }
      setRows(out);
      const rep = await api.latestReport().catch(() => null);
      setFound([...(rep?.refundProblems ?? []), ...(rep?.stuckRefunds ?? [])]);
    } catch (e) {
      fail(e);
    }
  }, [api, fail]);
  useEffect(() => void load(), [load]);
  return (
    <div>
      <Space><h2>{t('refunds.title')}</h2><Button onClick={() => void load()}>{t('common.refresh')}</Button></Space>
      <Typography.Paragraph type="secondary">{t('refunds.hint')}</Typography.Paragraph>
      {rows.length === 0 ? <Empty description={t('refunds.none')} /> : (
        <Table rowKey={(r: Row) => r.refund.outRefundNo} data={rows} pagination={false} scroll={{ x: 800 }} columns={[
          { title: t('refunds.order'), render: (_: unknown, r: Row) => <a className="mono" href={'#/orders/' + r.order.orderId}>{r.order.orderId}</a> },
          { title: t('refunds.outRefundNo'), render: (_: unknown, r: Row) => <span className="mono">{r.refund.outRefundNo}</span> },
          { title: t('refunds.amount'), render: (_: unknown, r: Row) => yuan(r.refund.amount) },
          { title: t('refunds.error'), render: (_: unknown, r: Row) => <Tag color="red">{r.refund.error}</Tag> },
          { title: t('refunds.resolution'), render: (_: unknown, r: Row) => r.refund.resolution ?? '' },
          { title: '', render: (_: unknown, r: Row) => (
            <Space>
              <Button size="mini" disabled={!r.refund.error?.startsWith('REFUSED')} onClick={() => setActing({ row: r, action: 'retry' })}>{t('refunds.retry')}</Button>
              <Button size="mini" onClick={() => setActing({ row: r, action: 'settle' })}>{t('refunds.settle')}</Button>
            </Space>
          ) },
        ]} />
      )}
      {found.length > 0 && <><h3>{t('refunds.fromReconcile')}</h3><ul>{found.map((f) => <li key={f} className="mono">{f}</li>)}</ul></>}
      {acting && <Resolve {...acting} onClose={() => setActing(null)} onDone={() => { setActing(null); void load(); }} />}
    </div>
  );
}

function Resolve({ row, action, onClose, onDone }: { row: Row; action: 'retry' | 'settle'; onClose: () => void; onDone: () => void }) {
  const { t } = useTranslation();
  const { api, fail } = useSession();
  const [reason, setReason] = useState('');
  const ok = () => api.refundAction(row.order.orderId, row.refund.outRefundNo, action, reason)
    .then(() => { Message.success(t(action === 'retry' ? 'refunds.retried' : 'refunds.settled')); onDone(); }, fail);
  return (
    <Modal title={`${t(action === 'retry' ? 'refunds.retry' : 'refunds.settle')}: ${row.refund.outRefundNo}`} visible onOk={() => void ok()} onCancel={onClose} okButtonProps={{ disabled: !reason }}>
      <Input placeholder={t('common.reason')} value={reason} onChange={setReason} />
    </Modal>
  );
}
