import { Box, Text, useApp, useStdout } from 'ink';
import { KeysProvider, useKeys } from './keys.js';
import { memo, useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { messageOf, type ConnectionState, type Organization, type TuiBackend } from './backend.js';
import { moveSelection } from './components/Table.js';
import { EventStore } from './event-store.js';
import { fitHints, HintsProvider } from './hints.js';
import { DASHBOARD_KEYS, DashboardTab } from './tabs/DashboardTab.js';
import { EVENTS_KEYS, EventsTab } from './tabs/EventsTab.js';
import { discountsConfig, productsConfig } from './tabs/configs.js';
import { customersConfig } from './tabs/customers.js';
import { metersConfig } from './tabs/meters.js';
import { ordersConfig } from './tabs/orders.js';
import { resourceKeys, ResourceTab, type ResourceConfig } from './tabs/ResourceTab.js';
import { subscriptionsConfig } from './tabs/subscriptions.js';
import type { TabProps } from './tabs/tab.js';
import { WEBHOOKS_KEYS, WebhooksTab } from './tabs/WebhooksTab.js';
import { ThemeContext, themeFor, useTheme } from './theme.js';

/** What the app opens with once signed in. */
export interface AppSetup {
  backend: TuiBackend;
  organizations: Organization[];
  organizationId: string;
}

export interface AppProps extends AppSetup {
  color: boolean;
  /** How often buffered stream events are drawn, in ms (one render per flush however many arrived). */
  flushMs?: number;
  /** Hears how long each render and commit of the Events or Dashboard tab took, in ms (the benchmark's frame time). */
  onCommit?(ms: number): void;
  /** The tab to open on (1 is the first); the Dashboard by default. */
  initialTab?: number;
  /** Least time between two Dashboard loads the stream causes, in ms (tests shorten it). */
  dashboardGapMs?: number;
}

interface TabSpec {
  name: string;
  /** The name in the tab bar when the full names do not fit. */
  short: string;
  keys: string;
  /** A list tab (ResourceTab) of this config; else `view` draws it (Events draws itself). */
  config?: ResourceConfig;
  view?: (props: TabProps) => ReactNode;
}

/**
 * A list tab re-renders for its own state only: the app re-renders on every flush of the live stream (10 a second
 * under load), which the lists do not show. (Its props are stable: the config, and setCaptured is a callback.)
 */
const ListTab = memo(ResourceTab);

/** Drawn by the app itself with the live stream (the others are lists or views of their own). */
const DASHBOARD = 0;
const EVENTS = 1;

const TABS: TabSpec[] = [
  { name: 'Dashboard', short: 'Dash', keys: DASHBOARD_KEYS },
  { name: 'Events', short: 'Events', keys: EVENTS_KEYS },
  { name: 'Orders', short: 'Orders', keys: resourceKeys(ordersConfig), config: ordersConfig },
  { name: 'Customers', short: 'Custs', keys: resourceKeys(customersConfig), config: customersConfig },
  { name: 'Subscriptions', short: 'Subs', keys: resourceKeys(subscriptionsConfig), config: subscriptionsConfig },
  { name: 'Products', short: 'Prods', keys: resourceKeys(productsConfig), config: productsConfig },
  { name: 'Discounts', short: 'Discs', keys: resourceKeys(discountsConfig), config: discountsConfig },
  { name: 'Meters', short: 'Meters', keys: resourceKeys(metersConfig), config: metersConfig },
  { name: 'Webhooks', short: 'Hooks', keys: WEBHOOKS_KEYS, view: (props) => <WebhooksTab {...props} /> },
];

const GLOBAL_KEYS = `1–${TABS.length} or Tab switch tabs · o switch organization · ? help · q quit`;
const TAIL = '? help · q quit';

/** The key that opens a tab, by its name ('1' for the first). */
export function tabKey(name: string): string {
  const index = TABS.findIndex((t) => t.name === name);
  if (index < 0) throw new Error(`No tab named ${name}`);
  return String(index + 1);
}

/** The tab bar's labels: full names when they fit in `columns`, else the short ones. */
export function tabLabels(columns: number): string[] {
  const full = TABS.map((t, index) => ` ${index + 1} ${t.name} `);
  return full.join('').length <= columns ? full : TABS.map((t, index) => `${index + 1} ${t.short} `);
}

/** The terminal UI: a header (server, organization, stream state), tabs, and the current view's keys. */
export function App({ color, ...props }: AppProps) {
  return (
    <ThemeContext.Provider value={themeFor(color)}>
      <KeysProvider>
        <Screen {...props} />
      </KeysProvider>
    </ThemeContext.Provider>
  );
}

function useTerminalSize() {
  const { stdout } = useStdout();
  const read = () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => void stdout.off('resize', onResize);
  }, [stdout]);
  return size;
}

/** Follows the organization's stream into an EventStore; re-renders at most once per flush. */
function useLiveStream(backend: TuiBackend, organizationId: string, flushMs: number) {
  const store = useMemo(() => new EventStore(), [organizationId]);
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<ConnectionState>({ kind: 'connecting' });
  const [gap, setGap] = useState<string | undefined>();
  useEffect(() => {
    const controller = new AbortController();
    setState({ kind: 'connecting' });
    backend
      .follow(organizationId, { onEvent: (event) => store.add(event), onGap: setGap, onState: (next) => !controller.signal.aborted && setState(next) }, controller.signal)
      .catch((error: unknown) => !controller.signal.aborted && setState({ kind: 'failed', message: messageOf(error) }));
    let drawn = store.version;
    const timer = setInterval(() => {
      if (store.version !== drawn) setVersion((drawn = store.version));
    }, flushMs);
    return () => {
      controller.abort();
      clearInterval(timer);
    };
  }, [backend, organizationId, store, flushMs]);
  return { store, version, state, gap };
}

function Screen({ backend, organizations: initialOrganizations, organizationId: initialOrganization, flushMs = 100, onCommit, initialTab = 1, dashboardGapMs }: Omit<AppProps, 'color'>) {
  const { exit } = useApp();
  const theme = useTheme();
  const { columns, rows } = useTerminalSize();
  const [organizations, setOrganizations] = useState(initialOrganizations);
  const [organizationId, setOrganizationId] = useState(initialOrganization);
  const [tab, setTab] = useState(Math.min(TABS.length, Math.max(1, initialTab)) - 1);
  const [captured, setCapturedState] = useState(false);
  // Read by the key handler before the next render: a key right after a form opens must not reach the app.
  const capturedRef = useRef(false);
  const setCaptured = useCallback((value: boolean) => {
    capturedRef.current = value;
    setCapturedState(value);
  }, []);
  const [overlay, setOverlay] = useState<'help' | 'orgs' | undefined>();
  const [orgChoice, setOrgChoice] = useState(0);
  const live = useLiveStream(backend, organizationId, flushMs);
  const organization = organizations.find((org) => org.id === organizationId);

  useKeys((input, key) => {
      if (capturedRef.current && overlay === undefined) {
        // Ctrl-C always quits, even from a form (ink's own exitOnCtrlC is off so Esc can leave a form first).
        if (key.ctrl && input === 'c') exit();
        return;
      }
      if (overlay === 'help') return setOverlay(undefined);
      if (overlay === 'orgs') {
        if (key.escape) return setOverlay(undefined);
        if (key.return) {
          const chosen = organizations[orgChoice];
          if (chosen) setOrganizationId(chosen.id);
          return setOverlay(undefined);
        }
        return setOrgChoice(moveSelection(orgChoice, organizations.length, input, key));
      }
      if (input === 'q' || (key.ctrl && input === 'c')) return exit();
      if (input === '?') return setOverlay('help');
      if (input === 'o') {
        setOrgChoice(Math.max(0, organizations.findIndex((org) => org.id === organizationId)));
        setOverlay('orgs');
        // Organizations may have been created since start.
        void backend
          .request<{ items: Organization[] }>('GET', '/v1/organizations/?limit=100')
          .then((page) => setOrganizations(page.items))
          .catch(() => {});
        return;
      }
      if (/^[1-9]$/.test(input) && Number(input) <= TABS.length) return setTab(Number(input) - 1);
      if (key.tab) return setTab((t) => (t + (key.shift ? TABS.length - 1 : 1)) % TABS.length);
      if (key.rightArrow) return setTab((t) => (t + 1) % TABS.length);
      if (key.leftArrow) return setTab((t) => (t + TABS.length - 1) % TABS.length);
  });

  const stream = live.state;
  const streamText =
    stream.kind === 'live'
      ? { text: '● live', color: theme.color('green') }
      : stream.kind === 'connecting'
        ? { text: '○ connecting…', color: theme.color('yellow') }
        : stream.kind === 'reconnecting'
          ? { text: `◌ reconnecting (${stream.reason})`, color: theme.color('yellow') }
          : { text: `✗ ${stream.message}`, color: theme.color('red') };
  const bodyHeight = Math.max(4, rows - 4);
  const current = TABS[tab]!;
  const tabProps = { backend, organizationId, height: bodyHeight, setCaptured };

  const footer = (hints: string | undefined) => (
    <Text dimColor wrap="truncate-end">
      {overlay === 'help'
        ? 'Any key closes the help'
        : overlay === 'orgs'
          ? '↑/↓ choose · Enter switch · Esc cancel'
          : captured
            ? fitHints(hints ?? 'Esc back', columns)
            : fitHints(hints ?? current.keys, columns, TAIL)}
    </Text>
  );

  return (
    <Box flexDirection="column" width={columns} height={rows}>
      <HintsProvider render={footer}>
      <Box justifyContent="space-between">
        <Text wrap="truncate-end">
          <Text bold color={theme.color('cyan')}>till</Text> {backend.server} · <Text bold>{organization?.name ?? organizationId}</Text>
          <Text dimColor> (o)</Text>
        </Text>
        <Text color={streamText.color} wrap="truncate-end">
          {streamText.text}
        </Text>
      </Box>
      <Text wrap="truncate-end">
        {tabLabels(columns).map((label, index) => (
          <Text key={label} inverse={index === tab} bold={index === tab}>
            {label}
          </Text>
        ))}
        {live.gap ? <Text color={theme.color('yellow')}> ! {live.gap}</Text> : null}
      </Text>
      <Box flexDirection="column" height={bodyHeight} overflowY="hidden">
        {overlay === 'help' ? (
          <Help />
        ) : overlay === 'orgs' ? (
          <Box flexDirection="column">
            <Text bold>Switch organization (↑/↓, Enter, Esc)</Text>
            {organizations.map((org, index) => (
              <Text key={org.id} inverse={index === orgChoice}>
                {org.id === organizationId ? '● ' : '  '}
                {org.name} <Text dimColor>{org.slug}</Text>
              </Text>
            ))}
          </Box>
        ) : tab === DASHBOARD ? (
          <DashboardTab key={organizationId} {...tabProps} store={live.store} version={live.version} onCommit={onCommit} minGapMs={dashboardGapMs} width={columns} />
        ) : tab === EVENTS ? (
          <EventsTab key={organizationId} {...tabProps} store={live.store} version={live.version} onCommit={onCommit} />
        ) : current.config ? (
          <ListTab key={`${organizationId}:${tab}`} {...tabProps} config={current.config} />
        ) : (
          <Box key={`${organizationId}:${tab}`} flexDirection="column">
            {current.view!(tabProps)}
          </Box>
        )}
      </Box>
      </HintsProvider>
    </Box>
  );
}

function Help() {
  return (
    <Box flexDirection="column">
      <Text bold>Keys</Text>
      <Text>Everywhere: {GLOBAL_KEYS}</Text>
      {TABS.map((t) => (
        <Text key={t.name} wrap="wrap">
          {t.name}: {t.keys}
        </Text>
      ))}
      <Text>Forms: ↑/↓ or Tab move · type to edit · ←/→ choose · Enter on the last field submits · Esc cancels</Text>
      <Text>Confirmations: y or Enter sends (once) · n or Esc goes back</Text>
      <Text dimColor>Any key closes this help.</Text>
    </Box>
  );
}
