import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventSourceMessage } from 'eventsource-parser';
import { createApiClient } from '../../api/client.js';
import { resolveCredentials } from '../../auth/credentials.js';
import { CliError, EXIT, notSignedIn } from '../../errors.js';
import { createOutput, type Env, type Streams } from '../../output.js';
import { organizationId, sessionOf, type Session } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { loadFixture } from '../fixtures/load.js';
import { didYouMean } from '../fixtures/nearest.js';
import { describeStep, executeFixtures } from '../fixtures/run.js';
import { requireSandbox } from '../fixtures/sandbox.js';
import { EVENT_TYPES } from '../listen/event-types.js';
import { follow } from '../listen/stream.js';

export interface TriggerOptions {
  server?: string;
  org?: string;
  json?: boolean;
  /** Seconds to wait for the event after the fixture ran. */
  wait?: string;
  /** Trigger in an organization that is not a sandbox without asking. */
  yes?: boolean;
}

const DEFAULT_WAIT_S = 15;

/** fixtures/triggers of the installed package (the bundle lives in dist/cli or dist/cli/chunks). */
export function triggersDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const candidate = join(dir, 'fixtures', 'triggers');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new CliError('FIXTURES_MISSING', 'The trigger fixtures (fixtures/triggers) are not installed next to till.', EXIT.error);
}

/** The event types that have a trigger fixture. */
export const availableTriggers = () =>
  readdirSync(triggersDir())
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort();

/**
 * `till trigger EVENT`: makes a real event of that type happen by running fixtures/triggers/EVENT.json, and
 * shows what it created and the id of the event (caught on the live stream, which is opened before the run).
 */
export async function trigger(eventType: string | undefined, options: TriggerOptions, env: Env, streams: Streams): Promise<number> {
  const out = createOutput(streams, env, options);
  const available = availableTriggers();
  if (eventType === undefined) {
    out.result({ event_types: available }, () => `Event types you can trigger:\n${available.map((type) => `  ${type}`).join('\n')}`);
    return EXIT.ok;
  }
  if (!(EVENT_TYPES as readonly string[]).includes(eventType)) {
    throw new CliError('UNKNOWN_EVENT_TYPE', `Unknown event type "${eventType}".${didYouMean(eventType, EVENT_TYPES)}`, EXIT.invalid, 'Run `till trigger` to list the event types.');
  }
  if (!available.includes(eventType)) throw new CliError('NO_TRIGGER', `There is no trigger fixture for ${eventType}.`, EXIT.notFound, 'Run `till trigger` to list the event types.');
  const waitS = options.wait === undefined ? DEFAULT_WAIT_S : Number(options.wait);
  if (!Number.isFinite(waitS) || waitS <= 0) throw new CliError('INVALID_WAIT', `--wait must be a number of seconds above 0, not "${options.wait}".`, EXIT.invalid);
  const fixture = await loadFixture(join(triggersDir(), `${eventType}.json`));

  const credentials = await resolveCredentials(env, options.server);
  const { server, token } = credentials;
  if (!token) throw notSignedIn(server);
  const session = sessionOf(env, streams, out, credentials);
  const orgId = await organizationOf(session, options.org);
  await requireSandbox(session, orgId, `the ${eventType} trigger`, options.yes === true);

  // Listen first, so the event cannot slip by between the run and the subscription.
  const controller = new AbortController();
  const messages: EventSourceMessage[] = [];
  let failure: unknown;
  let wake = () => {};
  const following = follow({
    url: `${server}/v1/cli/listen/${encodeURIComponent(orgId)}`,
    token,
    timeoutMs: 10_000,
    signal: controller.signal,
    onMessage: (message) => {
      messages.push(message);
      wake();
    },
  }).catch((error: unknown) => {
    failure = error;
    wake();
  });
  const waitFor = (match: (message: EventSourceMessage) => boolean, ms: number, what: string) =>
    new Promise<EventSourceMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new CliError('EVENT_NOT_SEEN', what, EXIT.error)), ms);
      wake = () => {
        if (failure) {
          clearTimeout(timer);
          reject(failure);
          return;
        }
        const found = messages.find(match);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      wake();
    });

  try {
    await waitFor((message) => message.event === 'ready', 15_000, `The event stream of ${server} did not open.`);
    const outcome = await executeFixtures([fixture], { server: options.server, org: orgId, json: options.json, yes: true }, env, streams, out, (step) => out.json || streams.stdout.write(`${describeStep(step, out)}\n`));
    // The event this run caused mentions something it created (other activity in the organization may emit the same type).
    const created = Object.values(outcome.ids);
    const ours = (message: EventSourceMessage) => message.event === eventType && (created.length === 0 || created.some((id) => message.data.includes(`"${id}"`)));
    const event = await waitFor(ours, waitS * 1000, `The fixture ran, but no ${eventType} event about what it created arrived within ${waitS} s.`);
    const payload = JSON.parse(event.data) as { data: unknown };
    out.result({ event: { id: event.id, type: eventType, data: payload.data }, steps: outcome.steps, ids: outcome.ids }, (style) => `${style.green('✓')} ${style.bold(eventType)} ${event.id}`);
    return EXIT.ok;
  } finally {
    controller.abort();
    await following;
  }
}

async function organizationOf(session: Session, flag: string | undefined): Promise<string> {
  const chosen = await organizationId(session, flag);
  if (chosen) return chosen;
  const page = await session.api.request<{ items: ApiObject[] }>('GET', '/v1/organizations/?limit=2');
  if (page.items.length === 1) return String(page.items[0].id);
  throw new CliError('ORGANIZATION_REQUIRED', page.items.length ? 'You belong to several organizations: say which one to trigger in.' : 'You belong to no organization.', EXIT.usage, 'Pass --org ID_OR_SLUG, or pick a default with `till orgs use`.');
}
