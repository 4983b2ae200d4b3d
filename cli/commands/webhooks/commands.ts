import { CliError, EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { openSession } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { describeValue, renderRecord, shortDate } from '../../ui/record.js';
import { renderTable } from '../../ui/table.js';
import { count } from '../../resources/words.js';

interface Common {
  server?: string;
  json?: boolean;
}

export type RotateOptions = Common;

export interface DeliveriesOptions extends Common {
  endpoint?: string[];
  event?: string;
  failed?: boolean;
  succeeded?: boolean;
  code?: string;
  type?: string[];
  since?: string;
  until?: string;
  page?: string;
  limit?: string;
}

export interface RedeliverOptions extends Common {
  endpoint?: string;
}

/** `till webhooks rotate-secret ID`: a new signing secret, shown once here (requests from now on use it). */
export async function rotateSecret(id: string, options: RotateOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const endpoint = await session.api.request<ApiObject>('PATCH', `/v1/webhooks/endpoints/${encodeURIComponent(id)}/secret`);
  session.out.result(endpoint, (style) => `${style.green('✓')} New signing secret for ${String(endpoint.url)}:\n${String(endpoint.secret)}\n${style.dim('Update your receiver: requests signed from now on use it.')}`);
  return EXIT.ok;
}

const CODE_CLASSES = ['2xx', '3xx', '4xx', '5xx'];

/** A date or an ISO 8601 timestamp for a query; a bare date is its midnight UTC. */
function timestamp(flag: string, value: string): string {
  const text = value.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00Z`;
  if (!Number.isNaN(Date.parse(text)) && /[zZ]|[+-]\d\d:?\d\d$/.test(text)) return text;
  throw new CliError('INVALID_FLAG', `${flag} "${value}": expected a date (2026-01-31) or an ISO 8601 timestamp with an offset.`, EXIT.invalid);
}

function positive(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,5}$/.test(value)) throw new CliError('INVALID_FLAG', `${flag} "${value}": expected a whole number from 1.`, EXIT.invalid);
  return value;
}

/** `till webhooks deliveries`: delivery attempts, newest first, with what the endpoint answered. */
export async function listDeliveries(options: DeliveriesOptions, env: Env, streams: Streams): Promise<number> {
  if (options.failed && options.succeeded) throw new CliError('CONFLICTING_FLAGS', 'Give --failed or --succeeded, not both.', EXIT.usage);
  if (options.code && !CODE_CLASSES.includes(options.code)) throw new CliError('INVALID_FLAG', `--code "${options.code}": expected one of ${CODE_CLASSES.join(', ')}.`, EXIT.invalid);
  const params = new URLSearchParams();
  for (const endpoint of options.endpoint ?? []) params.append('endpoint_id', endpoint);
  for (const type of options.type ?? []) params.append('event_type', type);
  if (options.event) params.set('query', options.event);
  if (options.failed) params.set('succeeded', 'false');
  if (options.succeeded) params.set('succeeded', 'true');
  if (options.code) params.set('http_code_class', options.code);
  if (options.since) params.set('start_timestamp', timestamp('--since', options.since));
  if (options.until) params.set('end_timestamp', timestamp('--until', options.until));
  params.set('page', positive('--page', options.page) ?? '1');
  params.set('limit', positive('--limit', options.limit) ?? '20');
  const session = await openSession(env, streams, options);
  const page = await session.api.request<{ items: ApiObject[]; pagination: { total_count: number; max_page: number } }>('GET', `/v1/webhooks/deliveries?${params}`);
  const pageNumber = Number(params.get('page'));
  session.out.list(page, page.items.length, (style) => {
    const event = (d: ApiObject) => (d.webhook_event ?? {}) as ApiObject;
    const table = renderTable(
      page.items,
      [
        { header: 'WHEN', value: (d) => shortDate(d.created_at) },
        { header: 'RESULT', value: (d) => (d.succeeded ? style.green('ok') : style.red('failed')) },
        { header: 'CODE', value: (d) => describeValue(d.http_code ?? '—') },
        { header: 'MS', value: (d) => describeValue(d.duration_ms) },
        { header: 'TRY', value: (d) => describeValue(d.attempt) },
        { header: 'EVENT', value: (d) => `${String(event(d).type)} ${String(event(d).id)}` },
        { header: 'ENDPOINT', value: (d) => String(d.webhook_endpoint_id), max: 36 },
        { header: 'ANSWER', value: (d) => String(d.response ?? '').replace(/\s+/g, ' ').slice(0, 60) },
      ],
      { terminal: streams.stdout.isTTY === true, style },
    );
    return table;
  }, { empty: pageNumber > 1 ? `No deliveries on page ${pageNumber}.` : 'No deliveries.', page: { page: pageNumber, pagination: page.pagination, unit: 'attempt' } });
  return EXIT.ok;
}

/** `till webhooks redeliver EVENT_ID [--endpoint ID]`: the event again, same webhook-id and body. */
export async function redeliver(eventId: string, options: RedeliverOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const query = options.endpoint ? `?endpoint_id=${encodeURIComponent(options.endpoint)}` : '';
  const answer = await session.api.request<ApiObject>('POST', `/v1/webhooks/events/${encodeURIComponent(eventId)}/redeliver${query}`);
  const endpoints = Array.isArray(answer.endpoint_ids) ? answer.endpoint_ids.map(String) : [];
  session.out.result(answer, (style) => `${style.green('✓')} Event ${eventId} queued again for ${count(endpoints.length, 'endpoint')}:\n${renderRecord({ endpoints: endpoints.join(', ') }, style)}`);
  return EXIT.ok;
}

