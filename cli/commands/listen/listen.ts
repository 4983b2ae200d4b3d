import type { EventSourceMessage } from 'eventsource-parser';
import { resolveServer } from '../../auth/credentials.js';
import { CliError, EXIT } from '../../errors.js';
import { createOutput, type Env, type Streams } from '../../output.js';
import { openSession, organizationId, type Session } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { didYouMean } from '../fixtures/nearest.js';
import { EVENT_TYPES } from './event-types.js';
import { forwardEvent } from './forward.js';
import { listenSecret } from './secret.js';
import { follow } from './stream.js';

export interface ListenOptions {
  server?: string;
  org?: string;
  forwardTo?: string;
  events?: string;
  json?: boolean;
  printSecret?: boolean;
  /** Seconds the server may stay unreachable before giving up. */
  timeout?: string;
}

export const DEFAULT_TIMEOUT_S = 120;
/** How many event ids are remembered to skip one the server sends again after a reconnect. */
const REMEMBERED = 10_000;

/**
 * `till listen`: follows the organization's live event stream and, with --forward-to, POSTs each event to a local
 * URL exactly as a webhook endpoint would receive it, signed with a secret kept per server. Runs until Ctrl-C.
 */
export async function listen(options: ListenOptions, env: Env, streams: Streams): Promise<number> {
  const timeoutS = parseTimeout(options.timeout);
  const types = parseEvents(options.events);
  const target = options.forwardTo === undefined ? undefined : parseTarget(options.forwardTo);

  if (options.printSecret) {
    const { server } = await resolveServer(env, options.server);
    const secret = listenSecret(env, server);
    createOutput(streams, env, options).result({ secret }, () => secret);
    return EXIT.ok;
  }

  const session = await openSession(env, streams, options);
  const { out } = session;
  const secret = listenSecret(env, session.server);
  const orgId = await resolveOrganization(session, options.org);
  const token = await tokenOf(session);
  const style = out.style.out;
  // One line per happening: JSON lines with --json, text otherwise, on stdout either way (CI greps it).
  const print = (human: string, json: Record<string, unknown>) => out.result(json, () => human, { lenient: true });

  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const forwarded = new Set<string>();
  const remember = (id: string) => {
    forwarded.add(id);
    if (forwarded.size > REMEMBERED) forwarded.delete(forwarded.values().next().value as string);
  };
  const onMessage = async (message: EventSourceMessage) => {
    if (message.event === 'ready' || message.event === 'gap') {
      if (message.event === 'gap') print(style.yellow(`! ${(JSON.parse(message.data) as { message: string }).message}`), { gap: JSON.parse(message.data) });
      return;
    }
    if (!message.id || !message.event) return;
    if (forwarded.has(message.id)) return;
    remember(message.id);
    if (types && !types.has(message.event)) return;
    const event = JSON.parse(message.data) as { type: string; timestamp: string; data: unknown };
    print(`${style.cyan('-->')} ${message.event} ${style.dim(message.id)}`, { event: { id: message.id, type: message.event, timestamp: event.timestamp, data: event.data } });
    if (!target) return;
    const result = await forwardEvent(target, secret, { id: message.id, body: message.data });
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const status = result.status === undefined ? style.red(`ERR ${result.error}`) : ok ? style.green(String(result.status)) : style.red(String(result.status));
    print(`${style.cyan('<--')} ${status} POST ${target.href} ${style.dim(`(${result.ms} ms)`)}`, {
      forwarded: { id: message.id, type: message.event, url: target.href, status: result.status ?? null, ms: result.ms, error: result.error ?? null },
    });
  };

  try {
    await follow({
      url: `${session.server}/v1/cli/listen/${encodeURIComponent(orgId)}`,
      token,
      timeoutMs: timeoutS * 1000,
      signal: controller.signal,
      onMessage,
      onConnected: (attempt) => {
        if (attempt === 1) {
          print(`Ready! Your webhook signing secret is ${style.bold(secret)} (^C to quit)`, { ready: true, secret, organization_id: orgId, forward_to: target?.href ?? null });
        } else {
          print(style.dim('Reconnected; catching up on missed events.'), { reconnected: true });
        }
      },
      onDisconnected: (reason) => print(style.yellow(`Connection lost (${reason}); reconnecting…`), { disconnected: reason }),
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return EXIT.ok;
}

function parseTimeout(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_TIMEOUT_S;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new CliError('INVALID_TIMEOUT', `--timeout must be a number of seconds above 0, not "${raw}".`, EXIT.invalid);
  return value;
}

function parseEvents(raw: string | undefined): Set<string> | undefined {
  if (raw === undefined) return undefined;
  const names = raw.split(',').map((name) => name.trim()).filter(Boolean);
  if (names.length === 0) throw new CliError('INVALID_EVENTS', '--events needs at least one event type.', EXIT.invalid);
  for (const name of names) {
    if (!(EVENT_TYPES as readonly string[]).includes(name)) {
      throw new CliError('UNKNOWN_EVENT_TYPE', `Unknown event type "${name}".${didYouMean(name, EVENT_TYPES)}`, EXIT.invalid, `Event types: ${EVENT_TYPES.join(', ')}`);
    }
  }
  return new Set(names);
}

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError('INVALID_FORWARD_URL', `--forward-to is not a URL: "${raw}".`, EXIT.invalid, 'Give a URL such as http://127.0.0.1:3000/webhooks.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError('INVALID_FORWARD_URL', `--forward-to must be an http:// or https:// URL, not "${raw}".`, EXIT.invalid);
  return url;
}

/** The organization to listen to: --org / TILL_ORG / the default, else the caller's only one. */
async function resolveOrganization(session: Session, flag: string | undefined): Promise<string> {
  const chosen = await organizationId(session, flag);
  if (chosen) return chosen;
  const page = await session.api.request<{ items: ApiObject[] }>('GET', '/v1/organizations/?limit=2');
  if (page.items.length === 1) return String(page.items[0].id);
  throw new CliError(
    'ORGANIZATION_REQUIRED',
    page.items.length === 0 ? 'You belong to no organization: there are no events to listen to.' : 'You belong to several organizations: say which one to listen to.',
    EXIT.usage,
    'Pass --org ID_OR_SLUG, or pick a default with `till orgs use`.',
  );
}

/** The bearer token the session's API caller uses (the stream is opened outside the JSON client). */
async function tokenOf(session: Session): Promise<string> {
  const { resolveCredentials } = await import('../../auth/credentials.js');
  const { token } = await resolveCredentials(session.env, session.server);
  if (!token) throw new CliError('NOT_SIGNED_IN', `Not signed in to ${session.server}.`, EXIT.notSignedIn, 'Run `till login` to sign in.');
  return token;
}
