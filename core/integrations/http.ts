import { GrantFailure } from '../billing/benefit-grants/providers/provider.js';

/** How long one call to GitHub or Discord may take before it counts as failed (and is retried by its job). */
const CALL_TIMEOUT_MS = 15_000;

export interface ProviderAnswer {
  status: number;
  body: unknown;
  headers: Headers;
}

/**
 * One HTTP call to a provider's API. A network failure or timeout is a retriable GrantFailure; any HTTP answer is
 * returned for the caller to judge. Credentials travel in headers only, and no message here ever quotes them.
 */
export async function providerCall(service: string, url: string, init: { method: string; headers: Record<string, string>; body?: string | URLSearchParams }): Promise<ProviderAnswer> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
  } catch (error) {
    const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${CALL_TIMEOUT_MS / 1000} s` : 'the connection failed';
    throw new GrantFailure('ProviderUnavailable', `${service} could not be reached (${reason})`, true);
  }
  const text = await response.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text.slice(0, 200);
    }
  }
  return { status: response.status, body, headers: response.headers };
}

/** The provider's own words for a refusal (GitHub's and Discord's bodies both carry `message`), clipped. */
export function providerMessage(body: unknown): string {
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') return body.message.slice(0, 300);
  if (typeof body === 'string' && body) return body.slice(0, 200);
  return 'no message';
}

/**
 * A refusal turned into the grant's recorded error: 5xx, 429 and 408 are the service's passing trouble and are
 * retried; other 4xx need the seller (permissions, a wrong repository or role) and are retried too, with the job's
 * backoff, since fixing them on the service's side needs nothing from Till.
 */
export function refusal(service: string, what: string, answer: ProviderAnswer): GrantFailure {
  const type = answer.status === 429 ? 'ProviderRateLimited' : answer.status >= 500 ? 'ProviderUnavailable' : 'ProviderRefused';
  return new GrantFailure(type, `${service} refused to ${what}: HTTP ${answer.status}, ${providerMessage(answer.body)}`, true);
}

/** A string field of a JSON answer, or undefined. */
export function field(body: unknown, name: string): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const value = (body as Record<string, unknown>)[name];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}
