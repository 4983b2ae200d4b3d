import { Webhook } from 'standardwebhooks';
import { CLI_VERSION } from '../../version.js';

export interface ForwardResult {
  /** The receiver's status, or undefined when no answer came. */
  status?: number;
  ms: number;
  error?: string;
}

const FORWARD_TIMEOUT_MS = 10_000;

/**
 * The Standard Webhooks headers tilld's delivery worker sends, keyed the same way (the UTF-8 bytes of the whole
 * secret, `whsec_` included, as Polar keys it), so `validateEvent` accepts them with the secret `till listen` printed.
 */
export function signedHeaders(secret: string, id: string, body: string, now = new Date()): Record<string, string> {
  const seconds = Math.floor(now.getTime() / 1000);
  const webhook = new Webhook(Buffer.from(secret, 'utf8').toString('base64'));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': webhook.sign(id, new Date(seconds * 1000), body),
  };
}

/** POSTs one event to the local endpoint as a real delivery would: the same body, signed now. */
export async function forwardEvent(target: URL, secret: string, event: { id: string; body: string }): Promise<ForwardResult> {
  const payload = Buffer.from(event.body, 'utf8');
  const headers = {
    ...signedHeaders(secret, event.id, event.body),
    'content-type': 'application/json',
    'content-length': String(payload.length),
    'user-agent': `till-cli/${CLI_VERSION} (listen)`,
  };
  const { request } = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (result: Omit<ForwardResult, 'ms'>) => resolve({ ...result, ms: Math.round(performance.now() - started) });
    const req = request(target, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => done({ status: res.statusCode }));
      res.on('error', (error) => done({ status: res.statusCode, error: error.message }));
    });
    req.setTimeout(FORWARD_TIMEOUT_MS, () => req.destroy(Object.assign(new Error(`no answer within ${FORWARD_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code === 'ETIMEDOUT' ? error.message : (error.code ?? error.message) }));
    req.end(payload);
  });
}
