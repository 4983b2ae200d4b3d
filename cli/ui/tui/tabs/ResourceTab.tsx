import { Box, Text } from 'ink';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import type { HttpMethod } from '../../../api/client.js';
import { messageOf, type TuiBackend } from '../backend.js';
import { Confirm } from '../components/Confirm.js';
import { Form, type FormField } from '../components/Form.js';
import { JsonView } from '../components/JsonView.js';
import { moveSelection, Table, type Column } from '../components/Table.js';
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
}

export const resourceKeys = (config: ResourceConfig) =>
  // The tab's own actions first: the footer keeps what fits, from the start.
  [...config.actions.map((action) => `${action.key} ${action.label}`), 'Enter details', 'r reload', '↑/↓ select'].join(' · ');

type Mode =
  | { kind: 'list' }
  | { kind: 'details'; row: Row }
  | { kind: 'view'; action: Action; row: Row }
  | { kind: 'form'; action: Action; row?: Row; error?: string; values?: Record<string, string> }
  | { kind: 'confirm'; action: Action; row?: Row; write: PreparedWrite; values: Record<string, string> }
  | { kind: 'sending'; write: PreparedWrite };

/** A list from the API with keyed writes: each asks for confirmation, is sent once, and shows the server's refusal. */
export function ResourceTab({ config, backend, organizationId, height, setCaptured }: TabProps & { config: ResourceConfig }) {
  const theme = useTheme();
  const [rows, setRows] = useState<Row[]>([]);
  const [loading, setLoading] = useState(true);
  const [status, setStatus] = useState<{ text: string; error: boolean } | undefined>();
  const [selected, setSelected] = useState(0);
  const [mode, setModeState] = useState<Mode>({ kind: 'list' });
  const inFlight = useRef(false);
  const setMode = (next: Mode) => {
    setModeState(next);
    setCaptured(next.kind !== 'list');
  };

  const load = useCallback(async () => {
    setLoading(true);
    try {
      const items = config.load ? await config.load(backend, organizationId) : (await backend.request<{ items: Row[] }>('GET', config.listPath!(organizationId))).items;
      setRows(items);
      setSelected((s) => Math.min(s, Math.max(0, items.length - 1)));
    } catch (error) {
      setStatus({ text: `Could not load ${config.noun}: ${messageOf(error)}`, error: true });
    } finally {
      setLoading(false);
    }
  }, [backend, config, organizationId]);
  useEffect(() => void load(), [load]);

  const send = async (write: PreparedWrite, back: Mode) => {
    if (inFlight.current) return;
    inFlight.current = true;
    setMode({ kind: 'sending', write });
    try {
      const answer = await backend.request(write.method, write.path, write.body);
      // The list comes back with the write in it: a key pressed next acts on what the server now holds.
      await load();
      setStatus({ text: typeof write.done === 'function' ? write.done(answer) : write.done, error: false });
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
      if (key.return && current) return setMode({ kind: 'details', row: current });
      const action = config.actions.find((candidate) => candidate.key === input);
      if (action) return start(action);
      setSelected(moveSelection(selected, rows.length, input, key, Math.max(1, height - 3)));
    },
    { isActive: mode.kind === 'list' },
  );

  if (mode.kind === 'view') return <>{mode.action.view!(mode.row, { backend, organizationId, height, close: () => setMode({ kind: 'list' }) })}</>;
  if (mode.kind === 'details') return <JsonView title={`${config.noun} ${String(mode.row.id)}`} value={mode.row} height={height} onClose={() => setMode({ kind: 'list' })} />;
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

  return (
    <Box flexDirection="column">
      {config.caption ? <Text bold wrap="truncate-end">{config.caption}</Text> : null}
      <Text wrap="truncate-end">
        {loading ? <Text dimColor>Loading {config.noun}… </Text> : <Text dimColor>{rows.length} {config.noun} </Text>}
        {status ? <Text color={theme.color(status.error ? 'red' : 'green')}>{status.error ? '✗ ' : '✓ '}{status.text}</Text> : null}
      </Text>
      <Table columns={config.columns} rows={rows} selected={selected} height={height - (config.caption ? 2 : 1)} empty={loading ? '' : config.empty} />
    </Box>
  );
}
