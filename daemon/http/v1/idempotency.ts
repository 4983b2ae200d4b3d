import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Principal } from '../../../core/billing/shared/principal.js';
import type { CoreError } from '../../../core/errors.js';
import type { IdempotentRequest } from '../../../core/idempotency/service.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Set on an answer that is a replay of the first request's (Stripe's header). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const WRITE_METHODS = new Set(['POST', 'PATCH', 'DELETE', 'PUT']);

/** JSON with object keys sorted, so a repeat whose body lists fields in another order is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The keyed request this is, if any: a write carrying `Idempotency-Key` from a known caller. Keys belong to
 * the organization of an access token, or to a signed-in user (who may act in several organizations).
 */
export function idempotentRequest(req: Request, principal: Principal): IdempotentRequest | undefined {
  const key = req.get(IDEMPOTENCY_HEADER);
  if (key === undefined || !WRITE_METHODS.has(req.method) || principal.kind === 'anonymous') return undefined;
  const scope = principal.kind === 'organization_token' ? `organization:${principal.organizationId}` : `user:${principal.userId}`;
  const path = req.originalUrl;
  return { scope, key, fingerprint: fingerprintOf(req.method, path, req.body), method: req.method, path };
}

/** What a repeat must match: method, path with query, and the body (an empty body and none are the same). */
export function fingerprintOf(method: string, path: string, body: unknown): string {
  const content = body && typeof body === 'object' && Object.keys(body).length > 0 ? body : null;
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(content)}`).digest('hex');
}

/**
 * Whether a refusal is the request's answer, kept for replays as Stripe keeps it. Not kept: invalid input
 * (nothing ran; the caller fixes the body and retries with the same key), conflicts and rate limits (they
 * depend on the moment, not on the request).
 */
export function keepsRefusal(error: CoreError): boolean {
  if (error.code === 'VALIDATION_ERROR') return false;
  return error.kind !== 'conflict' && error.kind !== 'rate_limited' && error.kind !== 'unauthorized';
}

/** Sends a stored answer again, marked as a replay. */
export function sendReplay(res: Response, status: number, responseBody: string | null) {
  res.setHeader(REPLAYED_HEADER, 'true');
  if (responseBody === null) res.status(status).end();
  else res.status(status).type('application/json').send(responseBody);
}
