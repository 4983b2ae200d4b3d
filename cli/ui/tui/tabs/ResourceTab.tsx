import { Box, Text, useStdout } from 'ink';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { HttpMethod } from '../../../api/client.js';
import { messageOf, type TuiBackend } from '../backend.js';
import { Confirm } from '../components/Confirm.js';
import { DetailView, type Section } from '../components/DetailView.js';
import { Form, type FormField } from '../components/Form.js';
import { JsonView } from '../components/JsonView.js';
import { moveSelection, Table, type Column } from '../components/Table.js';
import { TextField } from '../components/TextField.js';
import { useTheme } from '../theme.js';
import type { TabProps } from './tab.js';

export type Row = Record<string, unknown>;

/** A write, prepared: what the confirmation says and what is sent. */
export interface PreparedWrite {
  lines: string[];
  method: HttpMethod;
  path: string;
  body?: unknown;
  /** What the status line says once it went through (given the answer). */
  done: string | ((answer: unknown) => string);
  /** A link in the answer to open in the browser (a portal or invoice link); the status line shows it either way. */
  link?(answer: unknown): string;
}

export interface Action {
  key: string;
  label: string;
  /** False: works without a selected row (create). */
  needsRow: boolean;
  /** Why it cannot apply to this row (shown instead), or undefined. */
  refuse?(row: Row): string | undefined;
  form?(row: Row | undefined): { title: string; fields: FormField[] };
  /** Builds the request; throws an Error with a message for bad input. (Not for `run` or `view` actions.) */
  prepare?(row: Row | undefined, values: Record<string, string>, organizationId: string): PreparedWrite;
  /** Not a write: does this at once (e.g. switch the list shown). */
  run?(row: Row | undefined): void;
  /** Not a write: a view of the row drawn in place of the list (it takes every key; `close` comes back). */
  view?(row: Row, context: ViewContext): ReactNode;
}

/** What a row's view (e.g. a meter's chart) gets. */
export interface ViewContext {
  backend: TuiBackend;
  organizationId: string;
  height: number;
  close(): void;
}

export interface ResourceConfig {
  noun: string;
  /** The list's GET path; or `load`, for a list that takes more than one request. */
  listPath?(organizationId: string): string;
  load?(backend: TuiBackend, organizationId: string): Promise<Row[]>;
  /** A line above the table (e.g. which list this is). */
  caption?: string;
  columns: Column<Row>[];
  empty: string;
  actions: Action[];
  /** Lists `s` cycles through, the first shown first: each adds its query to the list's path. */
  filters?: { name: string; query: string }[];
  /** `/` searches: on the server (the list's `query` parameter) or in the rows listed (their `searchText`). */
  search?: 'server' | 'local';
  searchText?(row: Row): string;
  /** Enter's view of a row: sections loaded from the API (else the row's JSON). */
  details?(row: Row): { title: string; load(backend: TuiBackend, organizationId: string): Promise<Section[]> };
}

export const resourceKeys = (config: ResourceConfig) =>
  // The tab's own actions first: the footer keeps what fits, from the start.
  [
    ...config.actions.map((action) => `${action.key} ${action.label}`),
    'Enter details',
    ...(config.search ? ['/ search'] : []),
    ...(config.filters ? ['s show'] : []),
    'r reload',
    '↑/↓ select',
  ].join(' · ');

/** Rows whose search text holds every word of the search, ignoring case. */
export function searchRows(rows: Row[], search: string, text: (row: Row) => string): Row[] {
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return rows;
  return rows.filter((row) => {
    const haystack = text(row).toLowerCase();
    return words.every((word) => haystack.includes(word));
  });
}

type Mode =
  | { kind: 'list' }
  | { kind: 'details'; row: Row }
  | { kind: 'view'; action: Action; row: Row }
  | { kind: 'form'; action: Action; row?: Row; error?: string; values?: Record<string, string> }
  | { kind: 'confirm'; action: Action; row?: Row; write: PreparedWrite; values: Record<string, string> }
  | { kind: 'sending'; write: PreparedWrite }
  | { kind: 'search' };

/** A list from the API with keyed writes: each asks for confirmation, is sent once, and shows the server's refusal. */
export function ResourceTab({ config, backend, organizationId, height, setCaptured }: TabProps & { config: ResourceConfig }) {
  const theme = useTheme();
  const { stdout } = useStdout();
  const [loaded, setRows] = useState<Row[]>([]);
  const [filter, setFilter] = useState(0);
  const [search, setSearch] = useState('');
  const filterQuery = config.filters?.[filter]?.query ?? '';
  const serverSearch = config.search === 'server' ? search.trim() : '';
  const rows = useMemo(
    () => (config.search === 'local' && search.trim() ? searchRows(loaded, search, config.searchText ?? ((row) => JSON.stringify(row))) : loaded),
    [loaded, search, config],
  );
  const [loading, setLoading] = useState(true);
  const [status, setStatus] = useState<{ text: string; error: boolean } | undefined>();
  const [selected, setSelected] = useState(0);
  const [mode, setModeState] = useState<Mode>({ kind: 'list' });
  const inFlight = useRef(false);
  const setMode = (next: Mode) => {
    setModeState(next);
    setCaptured(next.kind !== 'list');
  };

  // Each load is numbered: only the latest one's answer is shown. Filters pressed in a row (s, s, s) send a request
  // each, and an earlier, slower answer must not replace the list of the filter now chosen.
  const latestLoad = useRef(0);
  const load = useCallback(async () => {
    const ticket = ++latestLoad.current;
    setLoading(true);
    try {
      const path = config.listPath ? `${config.listPath(organizationId)}${filterQuery ? `&${filterQuery}` : ''}${serverSearch ? `&query=${encodeURIComponent(serverSearch)}` : ''}` : '';
      const items = config.load ? await config.load(backend, organizationId) : (await backend.request<{ items: Row[] }>('GET', path)).items;
      if (ticket !== latestLoad.current) return;
      setRows(items);
      setSelected((s) => Math.min(s, Math.max(0, items.length - 1)));
    } catch (error) {
      if (ticket !== latestLoad.current) return;
      setStatus({ text: `Could not load ${config.noun}: ${messageOf(error)}`, error: true });
    } finally {
      if (ticket === latestLoad.current) setLoading(false);
    }
  }, [backend, config, organizationId, filterQuery, serverSearch]);
  useEffect(() => void load(), [load]);

  const send = async (write: PreparedWrite, back: Mode) => {
    if (inFlight.current) return;
    inFlight.current = true;
    setMode({ kind: 'sending', write });
    try {
      const answer = await backend.request(write.method, write.path, write.body);
      // The list comes back with the write in it: a key pressed next acts on what the server now holds.
      await load();
      const text = typeof write.done === 'function' ? write.done(answer) : write.done;
      const link = write.link?.(answer);
      const opened = link && backend.openUrl ? await backend.openUrl(link).catch(() => false) : false;
      setStatus({ text: opened ? `${text} (opened in your browser)` : text, error: false });
      setMode({ kind: 'list' });
    } catch (error) {
      setStatus({ text: messageOf(error), error: true });
      setMode(back.kind === 'form' ? { ...back, error: messageOf(error) } : { kind: 'list' });
    } finally {
      inFlight.current = false;
    }
  };

  const current = rows[selected];
  const start = (action: Action) => {
    if (action.needsRow && !current) return setStatus({ text: `No ${config.noun} selected.`, error: true });
    const row = action.needsRow ? current : undefined;
    const refusal = row && action.refuse?.(row);
    if (refusal) return setStatus({ text: refusal, error: true });
    if (action.run) return action.run(row);
    if (action.view) return setMode({ kind: 'view', action, row: row! });
    if (action.form) return setMode({ kind: 'form', action, row });
    try {
      setMode({ kind: 'confirm', action, row, write: action.prepare!(row, {}, organizationId), values: {} });
    } catch (error) {
      setStatus({ text: messageOf(error), error: true });
    }
  };

  useHints(mode.kind === 'list' ? resourceKeys(config) : undefined);
  useKeys(
    (input, key) => {
      if (input === 'r') return void load();
      if (input === '/' && config.search) return setMode({ kind: 'search' });
      if (input === 's' && config.filters) {
        setSelected(0);
        return setFilter((f) => (f + 1) % config.filters!.length);
      }
      if (key.return && current) return setMode({ kind: 'details', row: current });
      const action = config.actions.find((candidate) => candidate.key === input);
      if (action) return start(action);
      setSelected(moveSelection(selected, rows.length, input, key, Math.max(1, height - 3)));
    },
    { isActive: mode.kind === 'list' },
  );

  if (mode.kind === 'view') return <>{mode.action.view!(mode.row, { backend, organizationId, height, close: () => setMode({ kind: 'list' }) })}</>;
  if (mode.kind === 'details') {
    const detail = config.details?.(mode.row);
    if (detail) return <DetailView title={detail.title} load={() => detail.load(backend, organizationId)} raw={mode.row} height={height} onClose={() => setMode({ kind: 'list' })} />;
    return <JsonView title={`${config.noun} ${String(mode.row.id)}`} value={mode.row} height={height} onClose={() => setMode({ kind: 'list' })} />;
  }
  if (mode.kind === 'form') {
    const { title, fields } = mode.action.form!(mode.row);
    return (
      <Form
        key={mode.error ?? 'form'}
        title={title}
        fields={mode.values ? fields.map((field) => ({ ...field, initial: mode.values![field.name] ?? field.initial })) : fields}
        error={mode.error}
        focusLast={mode.values !== undefined}
        onCancel={() => setMode({ kind: 'list' })}
        onSubmit={(values) => {
          const write = mode.action.prepare!(mode.row, values, organizationId);
          setMode({ kind: 'confirm', action: mode.action, row: mode.row, write, values });
        }}
      />
    );
  }
  if (mode.kind === 'confirm') {
    const back: Mode = mode.action.form ? { kind: 'form', action: mode.action, row: mode.row, values: mode.values } : { kind: 'list' };
    return <Confirm lines={mode.write.lines} onConfirm={() => void send(mode.write, back)} onCancel={() => setMode(back)} />;
  }
  if (mode.kind === 'sending') return <Text color={theme.color('yellow')}>Sending… {mode.write.lines[0]}</Text>;

  // A status longer than the count line leaves (a link to copy) gets lines of its own, whole.
  const width = stdout.columns || 80;
  const countText = `${rows.length} ${config.noun} (…) `;
  const statusLines = status && countText.length + status.text.length + 2 > width ? Math.ceil((status.text.length + 2) / width) : 0;
  const shown = [config.filters && filter > 0 ? config.filters[filter]!.name : '', search.trim() ? `matching “${search.trim()}”` : ''].filter(Boolean).join(', ');
  return (
    <Box flexDirection="column">
      {config.caption ? <Text bold wrap="truncate-end">{config.caption}</Text> : null}
      {mode.kind === 'search' ? (
        <TextField
          label={config.search === 'server' ? 'search (Enter):' : 'search:'}
          initial={search}
          onChange={config.search === 'local' ? setSearch : undefined}
          onSubmit={(value) => {
            setSearch(value);
            setSelected(0);
            setMode({ kind: 'list' });
          }}
          onCancel={() => setMode({ kind: 'list' })}
        />
      ) : null}
      <Text wrap="truncate-end">
        {loading ? <Text dimColor>Loading {config.noun}… </Text> : <Text dimColor>{rows.length} {shown ? `${config.noun} (${shown})` : config.noun} </Text>}
        {status && !statusLines ? <Text color={theme.color(status.error ? 'red' : 'green')}>{status.error ? '✗ ' : '✓ '}{status.text}</Text> : null}
      </Text>
      {status && statusLines ? (
        <Text color={theme.color(status.error ? 'red' : 'green')} wrap="wrap">
          {status.error ? '✗ ' : '✓ '}
          {status.text}
        </Text>
      ) : null}
      <Table
        columns={config.columns}
        rows={rows}
        selected={Math.min(selected, Math.max(0, rows.length - 1))}
        height={height - (config.caption ? 2 : 1) - (mode.kind === 'search' ? 1 : 0) - statusLines}
        empty={loading ? '' : shown ? `No ${config.noun} here (s: show others, / search).` : config.empty}
      />
    </Box>
  );
}
