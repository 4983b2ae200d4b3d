import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress } from './address.js';

/** Characters of an answer kept with each delivery. */
export const RESPONSE_LIMIT = 2048;
/** Bytes of an answer read at most (enough for RESPONSE_LIMIT characters of any UTF-8). */
const READ_LIMIT = RESPONSE_LIMIT * 4;

export interface SendResult {
  succeeded: boolean;
  /** null when no answer came (refused address, DNS failure, timeout, connection error). */
  httpCode: number | null;
  /** The first 2,048 characters of the answer, or why there was none. */
  response: string | null;
  durationMs: number;
}

class RefusedAddress extends Error {}

/** dns.lookup that refuses private addresses, so the address connected to is the address checked. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused) return callback(new RefusedAddress(`Refused: ${hostname} resolves to ${refused.address}, a private address (set TILL_WEBHOOKS_ALLOW_PRIVATE=1 to allow)`), '', 0);
    if (!addresses.length) return callback(new Error(`No address for ${hostname}`), '', 0);
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};

/**
 * Kept-alive connections, one pool per protocol and per address policy (a socket opened while private addresses
 * were allowed is never reused by a request that must refuse them). An endpoint's events go out one after another:
 * without keep-alive each paid a new TCP (and TLS) handshake.
 */
const agents = {
  http: { open: new HttpAgent({ keepAlive: true }), publicOnly: new HttpAgent({ keepAlive: true }) },
  https: { open: new HttpsAgent({ keepAlive: true }), publicOnly: new HttpsAgent({ keepAlive: true }) },
};

/**
 * POSTs one signed webhook. Only a 2xx answer within `timeoutMs` (connection, answer and body together)
 * succeeds; redirects are not followed. Never throws: every failure is a result with its reason. A kept-alive
 * connection that the endpoint closed just as the request went out is retried once on a new connection.
 */
export function sendWebhook(
  target: { url: string; body: string; headers: Record<string, string> },
  options: { timeoutMs: number; allowPrivate: boolean; signal?: AbortSignal },
): Promise<SendResult> {
  const started = performance.now();
  const done = (result: Omit<SendResult, 'durationMs'>): SendResult => ({ ...result, durationMs: Math.round(performance.now() - started) });
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      return resolve(done({ succeeded: false, httpCode: null, response: 'Invalid URL' }));
    }
    if (!options.allowPrivate && isPrivateAddress(url.hostname)) {
      return resolve(done({ succeeded: false, httpCode: null, response: `Refused: ${url.hostname} is a private address (set TILL_WEBHOOKS_ALLOW_PRIVATE=1 to allow)` }));
    }
    const pool = url.protocol === 'https:' ? agents.https : agents.http;
    let settled = false;
    let current: ReturnType<typeof httpRequest> | undefined;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(result));
    };
    const timer = setTimeout(() => {
      finish({ succeeded: false, httpCode: null, response: `Timed out after ${options.timeoutMs} ms` });
      current?.destroy();
    }, options.timeoutMs);
    const go = (retried: boolean) => {
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        headers: { ...target.headers, 'content-length': String(Buffer.byteLength(target.body)) },
        lookup: options.allowPrivate ? undefined : publicOnlyLookup,
        signal: options.signal,
        agent: options.allowPrivate ? pool.open : pool.publicOnly,
      });
      current = request;
      request.on('error', (error: NodeJS.ErrnoException) => {
        // Nothing was answered on a reused connection the endpoint had just closed: the request never arrived.
        if (!retried && !settled && request.reusedSocket && error.code === 'ECONNRESET' && !options.signal?.aborted) return go(true);
        finish({ succeeded: false, httpCode: null, response: error.message.slice(0, RESPONSE_LIMIT) });
      });
      request.on('response', (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        const conclude = () => {
          const text = Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_LIMIT);
          finish({ succeeded: status >= 200 && status < 300, httpCode: status, response: text });
        };
        response.on('data', (chunk: Buffer) => {
          if (size >= READ_LIMIT) return;
          chunks.push(chunk);
          size += chunk.length;
          if (size >= READ_LIMIT) {
            conclude();
            response.destroy();
          }
        });
        response.on('end', conclude);
        // A body cut off after the status arrived still tells the status.
        response.on('error', conclude);
        response.on('aborted', conclude);
      });
      request.end(target.body);
    };
    go(false);
  });
}
