import { Box, Text } from 'ink';
import { useEffect, useState } from 'react';
import { aggregation, whereClause } from '../../../resources/specs/meters.js';
import { shortDate } from '../../record.js';
import { messageOf, type TuiBackend } from '../backend.js';
import { BarChart, formatQuantity } from '../components/BarChart.js';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { useTheme } from '../theme.js';
import type { ResourceConfig, Row } from './ResourceTab.js';

/** The windows `w` cycles through, and the intervals `i` toggles. */
export const WINDOWS = [
  { label: '24h', name: 'last 24 hours', ms: 24 * 3_600_000 },
  { label: '7d', name: 'last 7 days', ms: 7 * 86_400_000 },
  { label: '30d', name: 'last 30 days', ms: 30 * 86_400_000 },
  { label: '90d', name: 'last 90 days', ms: 90 * 86_400_000 },
] as const;
export const INTERVALS = ['day', 'hour'] as const;

const q = (organizationId: string) => `organization_id=${encodeURIComponent(organizationId)}`;

const describeClauses = (filter: unknown): string => {
  const { conjunction, clauses } = (filter ?? {}) as { conjunction?: string; clauses?: Row[] };
  if (!clauses?.length) return 'every event';
  return clauses.map((c) => ('clauses' in c ? `(${describeClauses(c)})` : `${String(c.property)} ${String(c.operator)} ${JSON.stringify(c.value)}`)).join(` ${conjunction} `);
};
const describeAggregation = (meter: Row) => {
  const a = (meter.aggregation ?? {}) as Row;
  return a.property ? `${String(a.func)}(${String(a.property)})` : String(a.func ?? '');
};

/** `name=api_call, tokens>10, model~gpt` → clauses (the `--where` grammar of `till meters create`). */
export function parseClauses(text: string) {
  return text
    .split(',')
    .map((clause) => clause.trim())
    .filter(Boolean)
    .map((clause) => {
      try {
        return whereClause(clause);
      } catch {
        throw new Error(`Clause “${clause}”: expected PROPERTY OP VALUE, e.g. name=api_call, tokens>10, model~gpt (contains), model!~mini.`);
      }
    });
}

/** Meters: list; create (name, filter clauses, aggregation); a meter's quantities as a bar chart; archive. */
export const metersConfig: ResourceConfig = {
  noun: 'meters',
  listPath: (org) => `/v1/meters/?${q(org)}&limit=100&sorting=-created_at`,
  empty: 'No meters yet: press n to create one.',
  columns: [
    { header: 'NAME', width: 20, value: (m) => String(m.name) },
    { header: 'FILTER', width: 30, value: (m) => describeClauses(m.filter) },
    { header: 'AGGREGATION', width: 14, value: describeAggregation },
    { header: 'ARCHIVED', width: 10, value: (m) => (m.archived_at ? shortDate(m.archived_at).slice(0, 10) : '—') },
  ],
  actions: [
    {
      key: 'c',
      label: 'chart',
      needsRow: true,
      view: (meter, context) => <MeterChart meter={meter} {...context} />,
    },
    {
      key: 'n',
      label: 'new',
      needsRow: false,
      form: () => ({
        title: 'New meter',
        fields: [
          { name: 'name', label: 'Name', hint: '3–256 characters' },
          { name: 'match', label: 'Events matching', choices: ['all clauses', 'any clause'] },
          { name: 'clauses', label: 'Clauses', hint: 'name=api_call, tokens>10, model~gpt (empty: every event)' },
          { name: 'func', label: 'Aggregation', choices: ['count', 'sum', 'max', 'min', 'avg', 'unique'] },
          { name: 'property', label: 'Of property', hint: 'sum/max/min/avg/unique: a metadata key, e.g. tokens' },
        ],
      }),
      prepare(_row, values, organizationId) {
        const name = (values.name ?? '').trim();
        if (!name) throw new Error('Name is required.');
        const conjunction = values.match === 'any clause' ? 'or' : 'and';
        const clauses = parseClauses(values.clauses ?? '');
        const property = (values.property ?? '').trim();
        const func = values.func ?? 'count';
        if (func === 'count' && property) throw new Error('count counts events: leave “Of property” empty (or choose sum, max, min, avg or unique).');
        if (func !== 'count' && !property) throw new Error(`${func} needs a property: a metadata key such as tokens.`);
        const aggregate = aggregation(func === 'count' ? 'count' : `${func}:${property}`);
        const filter = { conjunction, clauses };
        return {
          lines: [`Create meter “${name}”`, `Counts: ${describeClauses(filter)}`, `Aggregation: ${describeAggregation({ aggregation: aggregate })}`],
          method: 'POST',
          path: '/v1/meters/',
          body: { name, filter, aggregation: aggregate, organization_id: organizationId },
          done: `Created meter “${name}”.`,
        };
      },
    },
    {
      key: 'a',
      label: 'archive',
      needsRow: true,
      refuse: (m) => (m.archived_at ? `“${String(m.name)}” is archived already.` : undefined),
      prepare: (row) => {
        const m = row!;
        return {
          lines: [`Archive meter “${String(m.name)}”?`, 'It stops counting; a meter a live price bills cannot be archived.'],
          method: 'PATCH',
          path: `/v1/meters/${encodeURIComponent(String(m.id))}`,
          body: { is_archived: true },
          done: `Archived “${String(m.name)}”.`,
        };
      },
    },
  ],
};

interface Quantities {
  quantities: { timestamp: string; quantity: number }[];
  total: number;
}

const label = (timestamp: string, interval: string) => (interval === 'hour' ? `${timestamp.slice(0, 10)} ${timestamp.slice(11, 16)}` : timestamp.slice(0, 10));

export interface MeterChartProps {
  meter: Row;
  backend: TuiBackend;
  height: number;
  close(): void;
  /** The end of the window (now unless a test says). */
  now?: () => number;
}

/**
 * A meter's quantities (GET /v1/meters/{id}/quantities) as bars, newest at the bottom: `w` cycles the window
 * (24h, 7d, 30d, 90d), `i` the interval (day, hour), ↑/↓ scroll, `r` reloads, Esc goes back.
 */
export function MeterChart({ meter, backend, height, close, now = Date.now }: MeterChartProps) {
  const theme = useTheme();
  const [windowIndex, setWindowIndex] = useState(2);
  const [interval, setBucketInterval] = useState<(typeof INTERVALS)[number]>('day');
  const [reload, setReload] = useState(0);
  const [result, setResult] = useState<{ data?: Quantities; error?: string; loading: boolean }>({ loading: true });
  const [top, setTop] = useState(Number.MAX_SAFE_INTEGER);
  const span = WINDOWS[windowIndex]!;
  const chartHeight = Math.max(2, height - 2);

  useEffect(() => {
    let current = true;
    // Bars of another window or interval must not show under this one's title.
    setResult({ loading: true });
    const end = new Date(now());
    const start = new Date(end.getTime() - span.ms);
    const query = new URLSearchParams({ start_timestamp: start.toISOString(), end_timestamp: end.toISOString(), interval, timezone: 'UTC' });
    backend
      .request<Quantities>('GET', `/v1/meters/${encodeURIComponent(String(meter.id))}/quantities?${query}`)
      .then((data) => {
        if (!current) return;
        setResult({ data, loading: false });
        setTop(Number.MAX_SAFE_INTEGER);
      })
      .catch((error: unknown) => current && setResult({ error: messageOf(error), loading: false }));
    return () => void (current = false);
  }, [backend, meter, windowIndex, interval, reload]);

  const bars = (result.data?.quantities ?? []).map((bucket) => ({ label: label(bucket.timestamp, interval), value: bucket.quantity }));
  const visible = chartHeight - 1;
  const last = Math.max(0, bars.length - visible);
  const shownTop = Math.min(top, last);
  useHints('w/W window · i day/hour · ↑/↓ scroll · r reload · Esc back');
  useKeys((input, key) => {
    if (key.escape || key.return) return close();
    if (input === 'w') return setWindowIndex((w) => (w + 1) % WINDOWS.length);
    if (input === 'W') return setWindowIndex((w) => (w + WINDOWS.length - 1) % WINDOWS.length);
    if (input === 'i') return setBucketInterval((i) => (i === 'day' ? 'hour' : 'day'));
    if (input === 'r') return setReload((r) => r + 1);
    if (key.upArrow || input === 'k') setTop(Math.max(0, shownTop - 1));
    else if (key.downArrow || input === 'j') setTop(Math.min(last, shownTop + 1));
    else if (key.pageUp) setTop(Math.max(0, shownTop - visible));
    else if (key.pageDown) setTop(Math.min(last, shownTop + visible));
    else if (input === 'g') setTop(0);
    else if (input === 'G') setTop(last);
  });

  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {String(meter.name)} <Text dimColor>{describeAggregation(meter)}</Text> · {span.name} by {interval}
        {result.data ? ` · total ${formatQuantity(result.data.total)}` : ''}
        {result.loading ? <Text color={theme.color('yellow')}> loading…</Text> : null}
      </Text>
      <Text dimColor wrap="truncate-end">
        w window {WINDOWS.map((w) => (w === span ? `[${w.label}]` : w.label)).join(' ')} · i {interval === 'day' ? '[day] hour' : 'day [hour]'} · ↑/↓ scroll · r reload · Esc back
      </Text>
      {result.error ? (
        <Text color={theme.color('red')}>✗ {result.error}</Text>
      ) : result.data ? (
        <BarChart bars={bars} total={result.data.total} height={chartHeight} top={shownTop} />
      ) : null}
    </Box>
  );
}
