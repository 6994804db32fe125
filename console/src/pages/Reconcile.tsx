import { useCallback, useEffect, useState } from 'react';
import { Alert, Button, Card, Descriptions, Empty, Space, Table, Typography } from '@arco-design/web-react';
import { useTranslation } from 'react-i18next';
import { ApiError, type Report } from '../api';
import { useSession } from '../session';

/** Reconcile: the last report (differences, overdue orders, refund problems, repairs), and a run now. */
export function Reconcile() {
  const { t } = useTranslation();
  const { api, fail } = useSession();
  const [rep, setRep] = useState<Report | null>(null);
  const [busy, setBusy] = useState(false);
  const load = useCallback(() => {
    api.latestReport().then(setRep, (e) => (e instanceof ApiError && e.status === 404 ? setRep(null) : fail(e)));
  }, [api, fail]);
  useEffect(load, [load]);
  const run = () => { setBusy(true); api.runReconcile().then(setRep, fail).finally(() => setBusy(false)); };
  const list = (title: string, items?: string[]) => (items?.length ? <Card size="small" title={title}><ul>{items.map((i) => <li key={i} className="mono">{i}</li>)}</ul></Card> : null);
  return (
    <div>
      <Space><h2>{t('reconcile.title')}</h2><Button type="primary" loading={busy} onClick={run} id="run-reconcile">{t('reconcile.run')}</Button><Button onClick={load}>{t('common.refresh')}</Button></Space>
      {!rep ? <Empty description={t('reconcile.none')} /> : (
        <div className="stack" id="report">
          {rep.differences.length === 0 ? <Alert type="success" content={t('reconcile.clean')} /> : <Alert type="error" content={`${t('reconcile.differences')}: ${rep.differences.length}`} />}
          <Descriptions column={2} data={[
            { label: t('reconcile.skusChecked'), value: rep.skusChecked },
            { label: t('reconcile.duration'), value: rep.durationMs + ' ms' },
          ]} />
          {rep.differences.length > 0 && (
            <Table rowKey={(d) => d.skuId + d.rule} data={rep.differences} pagination={false} columns={[
              { title: 'SKU', dataIndex: 'skuId' }, { title: t('reconcile.rule'), dataIndex: 'rule' },
              { title: t('reconcile.expected'), dataIndex: 'expected' }, { title: t('reconcile.actual'), dataIndex: 'actual' },
            ]} />
          )}
          {list(t('reconcile.overdue'), rep.overdueOrders)}
          {list(t('reconcile.refundProblems'), rep.refundProblems)}
          {list(t('reconcile.stuckRefunds'), rep.stuckRefunds)}
          {list(t('reconcile.repaired'), rep.repaired.map((r) => `${r.skuId} ${r.rule} ${r.delta > 0 ? '+' : ''}${r.delta}`))}
          <Typography.Text type="secondary">{t('reconcile.alerts')}</Typography.Text>
        </div>
      )}
    </div>
  );
}
