import type { Request, Response } from 'express';
import { CLIENT_IP_HEADER } from '../../core/auth/auth.js';
import type { AppDeps } from '../app.js';

/** Only these of the browser's headers reach Better Auth: its credentials and what a session records. */
const FORWARDED_HEADERS = ['cookie', 'user-agent', CLIENT_IP_HEADER] as const;

/** The browser's cookie, user agent and client address, as Headers for a Better Auth call. */
export function authHeaders(req: Request): Headers {
  const headers = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}

/** Copies Better Auth's Set-Cookie headers (a new session, a refreshed or a cleared one) to the browser. */
export function forwardCookies(from: Headers, res: Response): void {
  for (const cookie of from.getSetCookie()) res.append('Set-Cookie', cookie);
}

export interface AuthCall {
  method: 'GET' | 'POST';
  /** Endpoint path below the auth base path, e.g. `/sign-in/email`. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface AuthReply {
  status: number;
  body: unknown;
}

/** A failed Better Auth reply, whichever of its two error shapes it used. */
export interface AuthFailure {
  status: number;
  /** UPPER_SNAKE code (`INVALID_EMAIL_OR_PASSWORD`) or an RFC 8628 one (`expired_token`). */
  code: string;
  message: string;
}

/**
 * Calls a Better Auth endpoint through its HTTP handler, not `auth.api`: only the handler runs the
 * request hooks, which are the rate limits (sign-in, sign-up, device codes) and the captcha check.
 * The request claims the daemon's own origin; the page routes refuse foreign ones before getting here.
 * A 5xx is a fault, not an answer for the user, so it throws (and is logged by the error handler).
 */
export async function callAuth(deps: AppDeps, req: Request, res: Response, call: AuthCall): Promise<AuthReply> {
  const { baseURL } = await deps.auth.$context;
  const url = new URL(`${baseURL}${call.path}`);
  for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
  const headers = authHeaders(req);
  headers.set('origin', new URL(deps.baseUrl).origin);
  for (const [name, value] of Object.entries(call.headers ?? {})) headers.set(name, value);
  if (call.body !== undefined) headers.set('content-type', 'application/json');
  const response = await deps.auth.handler(
    new globalThis.Request(url, { method: call.method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) }),
  );
  forwardCookies(response.headers, res);
  const text = await response.text();
  if (response.status >= 500) throw new Error(`Better Auth answered ${response.status} to ${call.method} ${call.path}`);
  return { status: response.status, body: parseJson(text) };
}

/** The code and message of a failed reply. */
export function authFailure(reply: AuthReply): AuthFailure {
  const body = (reply.body && typeof reply.body === 'object' ? reply.body : {}) as Record<string, unknown>;
  const code = typeof body.code === 'string' ? body.code : typeof body.error === 'string' ? body.error : 'UNKNOWN';
  const message =
    typeof body.message === 'string' ? body.message : typeof body.error_description === 'string' ? body.error_description : 'Something went wrong';
  return { status: reply.status, code, message };
}

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
