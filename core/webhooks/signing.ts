import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Prefix of every secret Till generates; a secret given by the caller may be any string of 32+ characters. */
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` plus 32 random bytes in base64url. */
export const generateSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

/**
 * The Standard Webhooks signer keyed as Polar keys it: the key is the UTF-8 bytes of the whole secret string
 * (`whsec_` included), handed to the library base64-encoded. Polar's SDK `validateEvent` keys its verifier
 * the same way, so it accepts what this signs.
 */
export const webhookFor = (secret: string): Webhook => new Webhook(Buffer.from(secret, 'utf8').toString('base64'));

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The three Standard Webhooks headers for one request: `webhook-id` (the event id, the same on every retry),
 * `webhook-timestamp` (seconds since the epoch, when this attempt is signed) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`). Sign the exact bytes you send.
 */
export function signWebhook(secret: string, message: { id: string; timestamp: Date; body: string }): SignedHeaders {
  // The library signs whole seconds; the timestamp header must be those same seconds.
  const seconds = Math.floor(message.timestamp.getTime() / 1000);
  const at = new Date(seconds * 1000);
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': webhookFor(secret).sign(message.id, at, message.body),
  };
}

/**
 * Verifies a request signed by `signWebhook` (a receiver's view; `till listen` and tests use it). Throws the
 * library's WebhookVerificationError with its message: 'Missing required headers', 'Message timestamp too old',
 * 'Message timestamp too new', 'Invalid Signature Headers' or 'No matching signature found'.
 */
export function verifyWebhook(secret: string, body: string, headers: Record<string, string>): unknown {
  return webhookFor(secret).verify(body, headers);
}
