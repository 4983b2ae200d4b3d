import type { EventSourceMessage } from 'eventsource-parser';
import { resolveCredentials } from '../auth/credentials.js';
import { CliError, EXIT, notSignedIn } from '../errors.js';
import { colorEnabled, type Env, type Streams } from '../output.js';
import { openSession, organizationId } from '../resources/session.js';
import type { Organization, StreamHandlers, TuiBackend } from '../ui/tui/backend.js';
import { follow } from './listen/stream.js';

export interface UiOptions {
  server?: string;
  org?: string;
}

/** The commands that do, one at a time, what the terminal UI does: named when there is no terminal. */
const INSTEAD =
  '`till listen` (live events), `till products list|create|archive`, `till discounts list|create|delete`, `till orders list`, `till refunds create`, `till webhooks …`, `till meters …`';

/**
 * `till ui` (and `till` alone on a terminal): the full-screen terminal UI. Loads ink and react only here.
 * Off a terminal it refuses, naming the commands to use instead.
 */
export async function ui(options: UiOptions, env: Env, streams: Streams): Promise<number> {
  if (!streams.stdin.isTTY || !streams.stdout.isTTY) {
    throw new CliError('NOT_A_TERMINAL', '`till ui` needs an interactive terminal (stdin and stdout a TTY).', EXIT.usage, `Use the commands instead: ${INSTEAD}.`);
  }
  const session = await openSession(env, streams, { server: options.server });
  const { token } = await resolveCredentials(env, session.server);
  if (!token) throw notSignedIn(session.server);
  const page = await session.api.request<{ items: Organization[] }>('GET', '/v1/organizations/?limit=100');
  const chosen = (await organizationId(session, options.org)) ?? page.items[0]?.id;
  if (!chosen) {
    throw new CliError('ORGANIZATION_REQUIRED', `You belong to no organization on ${session.server}.`, EXIT.invalid, 'Create one with `till orgs create`, then run `till ui` again.');
  }

  const backend: TuiBackend = {
    server: session.server,
    request: (method, path, body) => session.api.request(method, path, { body }),
    follow: (orgId, handlers, signal) => followStream(`${session.server}/v1/cli/listen/${encodeURIComponent(orgId)}`, token, handlers, signal),
  };
  // React's development build keeps per-render diagnostics that grow with a busy stream: run the production one.
  process.env.NODE_ENV ??= 'production';
  const { runTui } = await import('../ui/tui/run.js');
  await runTui({
    backend,
    organizations: page.items,
    organizationId: chosen,
    color: colorEnabled(streams.stdout, env),
    stdout: streams.stdout as NodeJS.WriteStream,
    stdin: process.stdin,
  });
  return EXIT.ok;
}

/** `till listen`'s stream client, reporting to the UI: resumes with Last-Event-ID, never gives up while the UI is open. */
export async function followStream(url: string, token: string, handlers: StreamHandlers, signal: AbortSignal): Promise<void> {
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
      if (message.event === 'ready' || !message.id || !message.event) return;
      const payload = JSON.parse(message.data) as { timestamp?: unknown };
      handlers.onEvent({ id: message.id, type: message.event, timestamp: String(payload.timestamp ?? ''), payload });
    },
    onConnected: () => handlers.onState({ kind: 'live' }),
    onDisconnected: (reason) => handlers.onState({ kind: 'reconnecting', reason }),
  });
}
