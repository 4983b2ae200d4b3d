import { Box, Text } from 'ink';
import { memo, useLayoutEffect, useMemo } from 'react';
import { formatMoney, shortDate } from '../../record.js';
import { sparkline } from '../../sparkline.js';
import type { EventStore } from '../event-store.js';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { useTheme } from '../theme.js';
import { useDashboard, type DashboardData } from './dashboard-data.js';
import type { Row } from './ResourceTab.js';
import type { TabProps } from './tab.js';

export const DASHBOARD_KEYS = 'r reload';

export interface DashboardTabProps extends TabProps {
  store: EventStore;
  version: number;
  /** Hears how long each render and commit of this tab took, in ms (the benchmark's frame time). */
  onCommit?(ms: number): void;
  /** Least time between two loads the stream causes, in ms (tests shorten it). */
  minGapMs?: number;
  /** Columns to fill. */
  width?: number;
}

const LABEL = 22;
const FIGURE = 16;

/**
 * Today's revenue and orders, MRR and active subscriptions with their 30-day trend (GET /v1/metrics by day in the
 * local timezone), and the latest failed payments and checkouts; loaded again as order, subscription, checkout and
 * refund events arrive on the live stream.
 */
export function DashboardTab({ backend, organizationId, height, store, version, onCommit, minGapMs, width = 80 }: DashboardTabProps) {
  const renderStarted = performance.now();
  useLayoutEffect(() => {
    onCommit?.(performance.now() - renderStarted);
  });
  const { data, loading, error, reload } = useDashboard(backend, organizationId, store, version, minGapMs);
  useHints(DASHBOARD_KEYS);
  useKeys((input) => {
    if (input === 'r') reload();
  });
  return <DashboardView data={data} loading={loading} error={error} height={height} width={width} />;
}

interface DashboardViewProps {
  data?: DashboardData;
  loading: boolean;
  error?: string;
  height: number;
  width: number;
}

/**
 * What the Dashboard shows. The stream re-renders the tab at every flush (10 a second under load) to see whether to
 * load again; what it shows changes with a load (about once a second), so this part is redrawn only then.
 */
const DashboardView = memo(function DashboardView({ data, loading, error, height, width }: DashboardViewProps) {
  const theme = useTheme();
  const status = error ? (
    <Text color={theme.color('red')}>✗ {error}</Text>
  ) : loading && !data ? (
    <Text dimColor>Loading…</Text>
  ) : (
    <Text dimColor>
      {data ? `updated ${data.loadedAt.toTimeString().slice(0, 8)}` : ''} · live
    </Text>
  );
  // Derived once per load, not when only `loading` moved.
  const figures = useMemo(() => (data ? dashboardFigures(data, width) : undefined), [data, width]);
  if (!data || !figures) {
    return (
      <Box flexDirection="column">
        <Text bold>Dashboard</Text>
        {status}
      </Box>
    );
  }
  const failures = Math.max(1, Math.floor((height - 9) / 2));
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text bold>Today</Text> <Text dimColor>({data.timezone})</Text> · {status}
      </Text>
      <Text wrap="truncate-end">
        {'  Revenue'.padEnd(LABEL)}
        <Text bold color={theme.color('green')}>{figures.todayRevenue.padStart(FIGURE)}</Text>
        {'   '}
        <Text bold>{String(figures.todayOrders)}</Text> {figures.todayOrders === 1 ? 'order' : 'orders'}
      </Text>
      <Text bold wrap="truncate-end">
        {`Last ${data.days.length} days`.padEnd(LABEL + FIGURE)}
        {'  '}
        <Text dimColor>trend by day</Text>
      </Text>
      {figures.trends.map((trend) => (
        <Trend key={trend.label} {...trend} />
      ))}
      <Failures title="Failed payments" rows={data.failedPayments} count={failures} line={paymentLine} empty="None." />
      <Failures title="Failed checkouts" rows={data.failedCheckouts} count={failures} line={checkoutLine} empty="None." />
    </Box>
  );
});

/** The Dashboard's figures and sparklines from one load, for `width` columns. */
function dashboardFigures(data: DashboardData, width: number) {
  const today = data.days.at(-1);
  const money = (amount: number) => formatMoney(amount, data.currency);
  const trendWidth = Math.max(8, Math.min(data.days.length, width - LABEL - FIGURE - 4));
  const series = (metric: keyof DashboardData['days'][number]) => data.days.map((day) => Number(day[metric] ?? 0));
  const trend = (label: string, figure: string, values: number[]) => ({ label, figure, line: sparkline(values, trendWidth) });
  const revenue = series('revenue');
  const orders = series('orders');
  return {
    todayRevenue: money(today?.revenue ?? 0),
    todayOrders: today?.orders ?? 0,
    trends: [
      trend('Revenue', money(sum(revenue)), revenue),
      trend('Orders', sum(orders).toLocaleString('en-US'), orders),
      trend('MRR', money(today?.monthly_recurring_revenue ?? 0), series('monthly_recurring_revenue')),
      trend('Active subscriptions', String(today?.active_subscriptions ?? 0), series('active_subscriptions')),
    ],
  };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

function Trend({ label, figure, line }: { label: string; figure: string; line: string }) {
  const theme = useTheme();
  return (
    <Text wrap="truncate-end">
      {`  ${label}`.padEnd(LABEL)}
      {figure.padStart(FIGURE)}
      {'  '}
      <Text color={theme.color('cyan')}>{line}</Text>
    </Text>
  );
}

const rowMoney = (row: Row) => formatMoney(Number(row.amount ?? row.total_amount ?? 0), String(row.currency ?? 'usd'));
const paymentLine = (p: Row) => `${shortDate(p.created_at)}  ${rowMoney(p).padStart(12)}  ${String(p.decline_message ?? p.decline_reason ?? 'declined')}`;
const checkoutLine = (c: Row) =>
  `${shortDate(c.created_at)}  ${rowMoney(c).padStart(12)}  ${String(c.customer_email ?? '—')} · ${String((c.product as Row | undefined)?.name ?? '')}`;

function Failures({ title, rows, count, line, empty }: { title: string; rows: Row[]; count: number; line(row: Row): string; empty: string }) {
  const theme = useTheme();
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {title} <Text dimColor>(latest)</Text>
      </Text>
      {rows.length === 0 ? <Text dimColor>  {empty}</Text> : null}
      {rows.slice(0, count).map((row) => (
        <Text key={String(row.id)} color={theme.color('red')} wrap="truncate-end">
          {'  '}
          {line(row)}
        </Text>
      ))}
    </Box>
  );
}
