import { useEffect, useRef, useState } from 'react';
import { Card, Empty, Grid, Progress, Space, Statistic, Tooltip, Typography } from '@arco-design/web-react';
import { useTranslation } from 'react-i18next';
import type { Sku } from '../api';
import { useSession } from '../session';
import { SkuStatus } from './Skus';

/** How often the page reads the counters, in seconds. */
export const REFRESH_SECONDS = 3;

/** A partition's write limit: 1,000 write units a second (DynamoDB, "Service, account, and table quotas"). */
const SHARD_WRITES_PER_SECOND = 1000;

export interface Rates { ordered: number; sold: number; soldSince: number }

/**
 * rates are what two readings of a SKU's counters say happened between them, in units
 * a second: ordered (available taken, net of releases) and sold (units that left
 * on-hand, i.e. paid orders committed). Restocks, write-offs and returns in between
 * skew them; refusals change no counter and show on the CloudWatch dashboard.
 */
export function rates(prev: Sku | undefined, cur: Sku, seconds: number, soldBefore: number): Rates {
  if (!prev || seconds <= 0) return { ordered: 0, sold: 0, soldSince: soldBefore };
  const sold = Math.max(0, prev.onHand - cur.onHand);
  return { ordered: Math.max(0, prev.available - cur.available) / seconds, sold: sold / seconds, soldSince: soldBefore + sold };
}

/** The live sale: every SKU on sale or upcoming, refreshed every few seconds; one column on a phone. */
export function LiveSale() {
  const { t, i18n } = useTranslation();
  const { api, fail } = useSession();
  const [skus, setSkus] = useState<Sku[]>([]);
  const [r, setR] = useState<Record<string, Rates>>({});
  const [at, setAt] = useState<Date | null>(null);
  const last = useRef<{ at: number; skus: Record<string, Sku>; r: Record<string, Rates> }>({ at: 0, skus: {}, r: {} });
  useEffect(() => {
    let stop = false;
    const tick = async () => {
      try {
        const all = (await api.allSkus()).filter((s) => s.onSale);
        const now = Date.now();
        const seconds = last.current.at ? (now - last.current.at) / 1000 : 0;
        const next: Record<string, Rates> = {};
        for (const s of all) next[s.skuId] = rates(last.current.skus[s.skuId], s, seconds, last.current.r[s.skuId]?.soldSince ?? 0);
        last.current = { at: now, skus: Object.fromEntries(all.map((s) => [s.skuId, s])), r: next };
        if (!stop) { setSkus(all); setR(next); setAt(new Date(now)); }
      } catch (e) {
        if (!stop) fail(e);
      }
    };
    void tick();
    const id = setInterval(() => void tick(), REFRESH_SECONDS * 1000);
    return () => { stop = true; clearInterval(id); };
  }, [api, fail]);
  return (
    <div>
      <h2>{t('live.title')}</h2>
      <Typography.Text type="secondary">{t('live.hint', { s: REFRESH_SECONDS })}{at ? ' · ' + t('common.updated') + ' ' + at.toLocaleTimeString(i18n.language) : ''}</Typography.Text>
      {skus.length === 0 ? <Empty description={t('live.none')} /> : (
        <Grid.Row gutter={[12, 12]} className="live-grid" style={{ marginTop: 12 }}>
          {skus.map((s) => <Grid.Col key={s.skuId} xs={24} md={12} xl={8}><LiveCard sku={s} r={r[s.skuId]} /></Grid.Col>)}
        </Grid.Row>
      )}
    </div>
  );
}

function LiveCard({ sku, r }: { sku: Sku; r?: Rates }) {
  const { t } = useTranslation();
  const held = sku.onHand > 0 ? (sku.reserved / sku.onHand) * 100 : 100;
  const shardLoad = r ? (r.ordered + r.sold) / Math.max(1, sku.shards) : 0;
  const limits = [
    { name: t('live.stockLeft'), pct: held, text: `${sku.reserved} / ${sku.onHand}` },
    { name: t('live.shardLoad'), pct: Math.min(100, (shardLoad / SHARD_WRITES_PER_SECOND) * 100), text: `${shardLoad.toFixed(1)} / ${SHARD_WRITES_PER_SECOND} /s`, help: t('live.shardLoadHelp') },
  ].sort((a, b) => b.pct - a.pct);
  return (
    <Card title={<Space><span>{sku.name}</span><span className="mono">{sku.skuId}</span></Space>} extra={<SkuStatus status={sku.status} />} data-sku={sku.skuId}>
      <Grid.Row gutter={8}>
        <Grid.Col span={8}><Statistic title={t('live.available')} value={sku.available} data-field="available" /></Grid.Col>
        <Grid.Col span={8}><Statistic title={t('live.pending')} value={sku.reserved} data-field="reserved" /></Grid.Col>
        <Grid.Col span={8}><Statistic title={t('live.sold')} value={r?.soldSince ?? 0} data-field="sold" /></Grid.Col>
      </Grid.Row>
      <Grid.Row gutter={8} style={{ marginTop: 12 }}>
        <Grid.Col span={8}><Statistic title={t('live.reservedRate')} value={(r?.ordered ?? 0).toFixed(1)} /></Grid.Col>
        <Grid.Col span={8}><Statistic title={t('live.paidRate')} value={(r?.sold ?? 0).toFixed(1)} /></Grid.Col>
        <Grid.Col span={8}><Tooltip content={t('live.refusalsHelp')}><Statistic title={t('live.refusals') + ' ⓘ'} value="—" /></Tooltip></Grid.Col>
      </Grid.Row>
      <div style={{ marginTop: 12 }}>
        <Typography.Text bold>{t('live.limits')}</Typography.Text>
        {limits.map((l) => (
          <div key={l.name} title={l.help}>
            <Typography.Text type="secondary">{l.name} · {l.text}</Typography.Text>
            <Progress percent={Math.round(l.pct)} status={l.pct >= 90 ? 'error' : l.pct >= 70 ? 'warning' : 'normal'} />
          </div>
        ))}
      </div>
    </Card>
  );
}
