import { Box, Text } from 'ink';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { useLayoutEffect, useMemo, useState } from 'react';
import type { StreamEvent } from '../backend.js';
import { JsonView } from '../components/JsonView.js';
import { moveSelection, Table, type Column } from '../components/Table.js';
import { TextField } from '../components/TextField.js';
import type { EventStore } from '../event-store.js';
import { useTheme } from '../theme.js';
import { Resend, type Notice } from './resend.js';
import type { TabProps } from './tab.js';

export const EVENTS_KEYS = '↑↓ move · Enter inspect · r resend · p pause · / filter · c clear';

const columns: Column<StreamEvent>[] = [
  { header: 'TIME', width: 8, value: (event) => (event.timestamp.length >= 19 ? event.timestamp.slice(11, 19) : event.timestamp) },
  { header: 'TYPE', width: 28, value: (event) => event.type },
  { header: 'ID', width: 38, value: (event) => event.id },
];

export interface EventsTabProps extends TabProps {
  store: EventStore;
  /** The store's version at the last flush: a new one re-renders this tab. */
  version: number;
  /** Hears how long each render and commit of this tab took, in ms (the benchmark's frame time). */
  onCommit?(ms: number): void;
}

/** The live stream, newest on top, following until paused; filter, inspect, counters per type and per minute. */
export function EventsTab({ store, version, height, setCaptured, backend, organizationId, onCommit }: EventsTabProps) {
  const theme = useTheme();
  // From the start of this render to the end of its commit (layout effects run after the children's).
  const renderStarted = performance.now();
  useLayoutEffect(() => {
    onCommit?.(performance.now() - renderStarted);
  });
  const [following, setFollowing] = useState(true);
  const [frozenAt, setFrozenAt] = useState(version);
  const [filter, setFilter] = useState('');
  const [filtering, setFiltering] = useState(false);
  const [selected, setSelected] = useState(0);
  const [inspecting, setInspecting] = useState<StreamEvent | undefined>();
  const [resending, setResending] = useState<StreamEvent | undefined>();
  const [notice, setNotice] = useState<Notice | undefined>();

  const shownVersion = following ? version : frozenAt;
  // Recomputed only when the shown version or the filter changes, not per event.
  const rows = useMemo(() => store.list(filter), [store, shownVersion, filter]);
  const pause = () => {
    setFollowing(false);
    setFrozenAt(version);
  };

  useHints(!filtering && !inspecting && !resending ? EVENTS_KEYS : undefined);
  useKeys(
    (input, key) => {
      if (input === 'p') {
        if (following) pause();
        else {
          setFollowing(true);
          setSelected(0);
        }
        return;
      }
      if (input === '/') {
        setFiltering(true);
        setCaptured(true);
        return;
      }
      if (input === 'c') return setFilter('');
      if (input === 'r') {
        const event = rows[Math.min(selected, rows.length - 1)];
        if (!event) return setNotice({ text: 'No event selected to resend.', error: true });
        // The list stays put while the endpoint is chosen.
        if (following) pause();
        setResending(event);
        setCaptured(true);
        return;
      }
      if (key.return && rows[selected]) {
        setInspecting(rows[selected]);
        setCaptured(true);
        return;
      }
      const next = moveSelection(selected, rows.length, input, key, Math.max(1, height - 5));
      if (next !== selected) {
        // Moving the selection stops following, so the row stays put under new arrivals.
        if (following) pause();
        setSelected(next);
      }
    },
    { isActive: !filtering && !inspecting && !resending },
  );

  if (resending) {
    return (
      <Resend
        event={resending}
        backend={backend}
        organizationId={organizationId}
        height={height}
        report={setNotice}
        close={() => {
          setResending(undefined);
          setCaptured(false);
        }}
      />
    );
  }

  if (inspecting) {
    return (
      <JsonView
        title={`${inspecting.type} ${inspecting.id}`}
        value={inspecting.payload}
        height={height}
        onClose={() => {
          setInspecting(undefined);
          setCaptured(false);
        }}
      />
    );
  }

  const counts = [...store.counts.entries()].sort((a, b) => b[1] - a[1]);
  const newSince = following ? 0 : store.total - totalAt(store, frozenAt);
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text bold>{store.total}</Text> events · {store.perMinute()}/min
        {counts.length > 0 ? ' · ' : ''}
        {counts
          .slice(0, 4)
          .map(([type, count]) => `${type} ${count}`)
          .join(' · ')}
      </Text>
      <Text wrap="truncate-end">
        {following ? <Text color={theme.color('green')}>● following</Text> : <Text color={theme.color('yellow')}>❚❚ paused{newSince > 0 ? ` (${newSince} new)` : ''}</Text>}
        {filtering ? null : filter ? <Text> · filter “{filter}” ({rows.length})</Text> : null}
      </Text>
      {notice ? (
        <Text color={theme.color(notice.error ? 'red' : 'green')} wrap="truncate-end">
          {notice.error ? '✗' : '✓'} {notice.text}
        </Text>
      ) : null}
      {filtering ? (
        <TextField
          label="filter (type or text):"
          initial={filter}
          onChange={(value) => {
            setFilter(value);
            setSelected(0);
          }}
          onSubmit={(value) => {
            setFilter(value);
            setFiltering(false);
            setCaptured(false);
          }}
          onCancel={() => {
            setFiltering(false);
            setCaptured(false);
          }}
        />
      ) : null}
      <Table
        columns={columns}
        rows={rows}
        selected={Math.min(selected, Math.max(0, rows.length - 1))}
        height={height - 2 - (filtering ? 1 : 0) - (notice ? 1 : 0)}
        empty={filter ? 'No kept event matches the filter.' : 'Waiting for events… (try `till trigger order.paid` in another terminal)'}
      />
    </Box>
  );
}

/** The store counts versions one per added event, so a version is the total at that moment. */
const totalAt = (_store: EventStore, version: number) => version;
