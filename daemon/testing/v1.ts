import { Polar } from '@polar-sh/sdk';
import type { SignedIn } from './auth-client.js';

/** The official SDK pointed at a test daemon, as a seller's application would construct it. */
export const polarSdk = (url: string, accessToken: string) => new Polar({ accessToken, serverURL: url });

/** A raw /v1 request (for what the SDK cannot send: bad input, other statuses, raw shapes). */
export const v1Request = (url: string, token: string | undefined, method: string, path: string, body?: unknown) =>
  fetch(`${url}/v1${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

/** Creates an organization through Better Auth as `who` (its owner) and returns its id. */
export async function createOrganization(who: SignedIn, name: string): Promise<string> {
  const slug = `${name.toLowerCase().replace(/\W+/g, '-')}-${Math.random().toString(36).slice(2, 8)}`;
  const res = await who.client.post('/organization/create', { name, slug });
  if (res.status !== 200) throw new Error(`organization create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/**
 * A /v1 call that must succeed: the parsed JSON answer, or an Error naming the call, its status and body (for a
 * test's set-up steps; use v1Request to check other statuses).
 */
export async function v1Json<T = any>(url: string, token: string | undefined, method: string, path: string, body?: unknown): Promise<T> {
  const res = await v1Request(url, token, method, path, body);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
