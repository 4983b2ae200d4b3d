import { EVENT_TYPES } from '../../commands/listen/event-types.js';
import { describeValue, shortDate } from '../../ui/record.js';
import { boolean, choice, text } from '../fields.js';
import type { ResourceSpec } from '../spec.js';
import { count } from '../words.js';

/**
 * `till webhooks`: endpoints that receive the organization's events, signed (Standard Webhooks). list, get,
 * create, update and delete here; rotate-secret, deliveries and redeliver are commands of their own
 * (cli/commands/webhooks/).
 */
export const webhooks: ResourceSpec = {
  noun: 'webhooks',
  singular: 'webhook endpoint',
  path: '/v1/webhooks/endpoints/',
  verbs: ['create', 'list', 'get', 'update', 'delete'],
  organizationScoped: true,
  fields: [
    text('--url <url>', 'url', 'where events are POSTed (http or https)', { required: { question: 'Endpoint URL' } }),
    text('--name <name>', 'name', 'a name to tell endpoints apart (empty clears it)'),
    choice('--format <format>', 'format', ['raw', 'discord', 'slack'], 'raw: the event JSON; discord, slack: a short chat message', { required: true }),
    {
      flags: '--event <type>',
      description: 'an event type to send, e.g. order.paid (repeatable; replaces the list; `all` for every type)',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['events'],
      required: { question: 'Event types (comma separated, or all)' },
      apply(values, body) {
        const types = values.flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
        body.events = types.includes('all') ? [...ALL_EVENT_TYPES] : types;
      },
    },
    text('--secret <secret>', 'secret', 'sign with this secret (32+ characters) instead of a generated whsec_ one', { verbs: ['create'] }),
    boolean('--enabled <bool>', 'enabled', 'send events (enabling a disabled endpoint clears its failures)', { verbs: ['update'] }),
  ],
  columns: [
    { header: 'ID', value: (endpoint) => String(endpoint.id), max: 36 },
    { header: 'URL', value: (endpoint) => String(endpoint.url), max: 60 },
    { header: 'FORMAT', value: (endpoint) => String(endpoint.format) },
    { header: 'EVENTS', value: (endpoint) => (Array.isArray(endpoint.events) ? count(endpoint.events.length, 'type') : '—') },
    { header: 'ENABLED', value: (endpoint) => (endpoint.enabled ? 'yes' : `no${endpoint.disabled_at ? ` (since ${shortDate(endpoint.disabled_at)})` : ''}`) },
    { header: 'NAME', value: (endpoint) => describeValue(endpoint.name ?? '—') },
  ],
  // The signing secret is shown once: it is part of what a create prints.
  describeCreated: (endpoint, style) => `${style.green('✓')} Created webhook endpoint ${String(endpoint.url)} (${String(endpoint.id)}).\n${style.dim('signing secret')}  ${String(endpoint.secret)}`,
  createdHint: (endpoint) => `Verify requests with this secret (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). \`till webhooks deliveries --endpoint ${String(endpoint.id)}\` shows the attempts.`,
};

/** The event types Till sends (SPEC §3), for `--event all`: the one list the CLI keeps. */
export const ALL_EVENT_TYPES = EVENT_TYPES;
