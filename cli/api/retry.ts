import { CliError, EXIT } from '../errors.js';

/**
 * When the API client tries a request again. SPEC §9: the default fetch retry is linear with a 1000 ms
 * delay, so tries are a constant second apart (no backoff), three in all.
 */
export interface RetryPolicy {
  /** Tries in all, the first included; 1 turns retrying off. */
  attempts: number;
  /** Wait between two tries. */
  delayMs: number;
  /** The longest Retry-After worth waiting for; a 429 asking for more fails at once, its hint saying when. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, delayMs: 1000, maxRetryAfterMs: 10_000 };

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/**
 * Whether a request may be sent twice: an idempotent method, or a write the server can recognise as a
 * repeat by its Idempotency-Key. The device-login poll is a keyless POST, so it is never retried here:
 * it keeps its own RFC 8628 timing.
 */
export const mayRepeat = (method: string, idempotencyKey: string | undefined): boolean =>
  IDEMPOTENT.has(method) || (idempotencyKey !== undefined && idempotencyKey !== '');

/**
 * Connection failures worth another try: the connection broke or stalled, or the name lookup failed for now.
 * A refused connection, an unknown host or no route to it is not among them: nothing listens there, and a
 * second later nothing will either, so the command fails at once and says where it looked (exit 8).
 */
const TRANSIENT_ERRORS = new Set(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

export const isTransientError = (error: unknown): boolean => TRANSIENT_ERRORS.has((error as { code?: unknown } | null)?.code as string);

/**
 * How long to wait before trying a request that got this status again, or undefined when it must not be:
 * only 429 and 5xx (not 501, which will not change) are retried; every other 4xx is final.
 */
export function delayAfterStatus(status: number, retryAfter: string | undefined, policy: RetryPolicy, now = Date.now()): number | undefined {
  if (status >= 500 && status !== 501) return policy.delayMs;
  if (status !== 429) return undefined;
  const asked = parseRetryAfter(retryAfter, now);
  if (asked === undefined) return policy.delayMs;
  return asked > policy.maxRetryAfterMs ? undefined : Math.max(asked, policy.delayMs);
}

/** Retry-After (or Better Auth's X-Retry-After) in ms: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Most retries TILL_RETRIES may ask for: enough for a restart, not enough to hide an outage. */
export const MAX_RETRIES = 10;

/**
 * TILL_RETRIES: how many times a retryable request is tried again after the first try (0 turns retrying
 * off; default 2, so three tries in all). A command that sets its own policy (`till status` tries once) keeps it.
 */
export function retryFromEnv(env: Record<string, string | undefined> = process.env): Partial<RetryPolicy> {
  const raw = env.TILL_RETRIES?.trim();
  if (raw === undefined || raw === '') return {};
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_RETRIES) {
    throw new CliError('INVALID_TILL_RETRIES', `TILL_RETRIES must be a whole number from 0 to ${MAX_RETRIES}; got "${env.TILL_RETRIES}".`, EXIT.usage, 'Unset it for the default: 2 retries, 1 s apart.');
  }
  return { attempts: Number(raw) + 1 };
}
