import { shortDate } from '../../ui/record.js';
import { invalidFlag, text } from '../fields.js';
import type { ApiObject, ResourceSpec } from '../spec.js';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** `--expires-in`: seconds, 30d / 12h / 2w, an ISO 8601 duration (P30D), or never. */
export function expiresIn(value: string): number | string | null {
  const text = value.trim();
  if (/^never$/i.test(text)) return null;
  if (/^\d+$/.test(text)) return Number(text);
  const short = /^(\d+)\s*([smhdw])$/i.exec(text);
  if (short) return Number(short[1]) * UNIT_SECONDS[short[2]!.toLowerCase()]!;
  if (/^P/i.test(text)) return text.toUpperCase();
  throw invalidFlag('--expires-in', value, 'expected seconds, 30d, 12h, 2w, an ISO 8601 duration such as P30D, or never');
}

/** `till tokens`: organization access tokens for CI and servers (TILL_TOKEN, or the SDK's accessToken). */
export const accessTokens: ResourceSpec = {
  noun: 'tokens',
  singular: 'access token',
  path: '/v1/organization-access-tokens/',
  verbs: ['create', 'list', 'update', 'delete'],
  organizationScoped: true,
  sorting: ['created_at', 'comment', 'last_used_at'],
  fields: [
    text('--comment <text>', 'comment', 'what the token is for', { required: { question: 'What is the token for (a comment)?' } }),
    {
      flags: '--scope <scope>',
      description: 'a scope it grants, e.g. products:write (repeatable, or comma-separated; on update it replaces the list)',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['scopes'],
      required: { question: 'Scopes, comma-separated (e.g. products:write,customers:read)' },
      apply(values, body) {
        const scopes = values.flatMap((value) => value.split(',')).map((scope) => scope.trim()).filter(Boolean);
        if (scopes.length === 0) throw invalidFlag('--scope', values.join(','), 'expected at least one scope');
        body.scopes = scopes;
      },
    },
    {
      flags: '--expires-in <duration>',
      description: 'lifetime: seconds, 30d, 12h, 2w or P30D (default: never expires)',
      verbs: ['create'],
      keys: ['expires_in'],
      apply(value, body) {
        body.expires_in = expiresIn(value);
      },
    },
  ],
  createdObject: (answer) => answer.organization_access_token as ApiObject,
  // Only the token on stdout, so `TOKEN=$(till tokens create …)` captures it.
  describeCreated: (created) => String(created.token),
  createdHint: () => 'Copy the token now: it is not shown again. Use it as TILL_TOKEN, or as the SDK\'s accessToken.',
  columns: [
    { header: 'ID', value: (token) => String(token.id), max: 36 },
    { header: 'COMMENT', value: (token) => String(token.comment) },
    { header: 'SCOPES', value: (token) => (Array.isArray(token.scopes) ? token.scopes.join(',') : ''), max: 48 },
    { header: 'EXPIRES', value: (token) => (token.expires_at ? shortDate(token.expires_at) : 'never') },
    { header: 'LAST USED', value: (token) => (token.last_used_at ? shortDate(token.last_used_at) : 'never') },
  ],
};
