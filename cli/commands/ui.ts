import type { EventSourceMessage } from 'eventsource-parser';
import { createApiClient } from '../api/client.js';
import { resolveCredentials } from '../auth/credentials.js';
import { openProfileStore, type ProfileStore } from '../auth/profiles.js';
import { CliError, EXIT } from '../errors.js';
import { colorEnabled, createOutput, type Env, type Streams } from '../output.js';
import { createCaller } from '../resources/api.js';
import { organizationId, type Session } from '../resources/session.js';
import type { AppSetup } from '../ui/tui/App.js';
import type { Organization, StreamHandlers, TuiBackend } from '../ui/tui/backend.js';
import { createLoginFlow } from '../ui/tui/login-flow.js';
import type { Start } from '../ui/tui/Root.js';
import { follow } from './listen/stream.js';

export interface UiOptions {
  server?: string;
  org?: string;
}

/** The commands that do, one at a time, what the terminal UI does: named when there is no terminal. */
const INSTEAD =
  '`till metrics` (the dashboard\'s figures), `till listen` (live events), `till orders list|get|invoice`, `till customers list|state|portal`, `till subscriptions list|cancel|uncancel|revoke`, `till products list|create|archive`, `till discounts list|create|delete`, `till refunds create`, `till webhooks …`, `till meters …`';

/**
 * `till ui` (and `till` alone on a terminal): the full-screen terminal UI. Loads ink and react only here.
 * Off a terminal it refuses, naming the commands to use instead. Not signed in (or the stored session ended), it
 * signs in inside the app with `till login`'s device-code flow.
 */
export async function ui(options: UiOptions, env: Env, streams: Streams): Promise<number> {
  if (!streams.stdin.isTTY || !streams.stdout.isTTY) {
    throw new CliError('NOT_A_TERMINAL', '`till ui` needs an interactive terminal (stdin and stdout a TTY).', EXIT.usage, `Use the commands instead: ${INSTEAD}.`);
  }
  const { server, token, source, store } = await resolveCredentials(env, options.server);
  const connect = (signedIn: string) => openApp(env, streams, server, signedIn, options.org, store);
  const signIn = (reason?: string): Start => ({
    kind: 'sign-in',
    flow: createLoginFlow(server, async () => store ?? (await openProfileStore(env))),
    reason,
    connect,
  });

  let start: Start;
  if (!token) start = signIn();
  else {
    try {
      start = { kind: 'app', setup: await connect(token) };
    } catch (error) {
      // A stored session the server no longer knows: sign in again inside the app. (TILL_TOKEN is the caller's to fix.)
      if (source !== 'profile' || !(error instanceof CliError) || error.exitCode !== EXIT.notSignedIn) throw error;
      start = signIn(`Your session on ${server} ended (signed out or expired): sign in again.`);
    }
  }

  // React's development build keeps per-render diagnostics that grow with a busy stream: run the production one.
  process.env.NODE_ENV ??= 'production';
  const { runTui } = await import('../ui/tui/run.js');
  await runTui({ start, color: colorEnabled(streams.stdout, env), stdout: streams.stdout as NodeJS.WriteStream, stdin: process.stdin });
  return EXIT.ok;
}

/** What the app needs once signed in: the API with this token, the organizations, the one to open. */
async function openApp(env: Env, streams: Streams, server: string, token: string, org: string | undefined, store: ProfileStore | undefined): Promise<AppSetup> {
  const session: Session = { env, streams, out: createOutput(streams, env, {}), server, api: createCaller(createApiClient({ server }), token), store };
  const page = await session.api.request<{ items: Organization[] }>('GET', '/v1/organizations/?limit=100');
  const chosen = (await organizationId(session, org)) ?? page.items[0]?.id;
  if (!chosen) {
    throw new CliError('ORGANIZATION_REQUIRED', `You belong to no organization on ${server}.`, EXIT.usage, 'Create one with `till orgs create`, then run `till ui` again.');
  }
  return { backend: apiBackend(server, token), organizations: page.items, organizationId: chosen };
}

/** The UI's backend: the commands' API caller with this token, and `till listen`'s stream client. */
export function apiBackend(server: string, token: string): TuiBackend {
  const api = createCaller(createApiClient({ server }), token);
  return {
    server,
    request: (method, path, body) => api.request(method, path, { body }),
    // The first connection opens with the organization's recent history; reconnects resume with Last-Event-ID.
    follow: (orgId, handlers, signal) => followStream(`${server}/v1/cli/listen/${encodeURIComponent(orgId)}?recent=${HISTORY}`, token, handlers, signal),
    openUrl: async (url) => (await import('../browser.js')).openBrowser(url),
  };
}

/** How many of the organization's latest events the UI opens with. */
export const HISTORY = 100;

/** `till listen`'s stream client, reporting to the UI: resumes with Last-Event-ID, never gives up while the UI is open. */
export async function followStream(url: string, token: string, handlers: StreamHandlers, signal: AbortSignal): Promise<void> {
  // Events before the first `ready` are the history asked for with ?recent= (or a catch-up), not arrivals.
  let live = false;
  await follow({
    url,
    token,
    timeoutMs: 7 * 24 * 3600 * 1000,
    signal,
    onMessage: (message: EventSourceMessage) => {
      if (message.event === 'gap') {
        handlers.onGap?.(String((JSON.parse(message.data) as { message?: unknown }).message ?? 'some events were missed'));
        return;
      }
      if (message.event === 'ready') live = true;
      if (message.event === 'ready' || !message.id || !message.event) return;
      const payload = JSON.parse(message.data) as { timestamp?: unknown };
      handlers.onEvent({ id: message.id, type: message.event, timestamp: String(payload.timestamp ?? ''), payload, ...(live ? {} : { history: true }) });
    },
    onConnected: () => handlers.onState({ kind: 'live' }),
    onDisconnected: (reason) => handlers.onState({ kind: 'reconnecting', reason }),
  });
}
