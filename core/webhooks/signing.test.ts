import { validateEvent, WebhookVerificationError as PolarVerificationError } from '@polar-sh/sdk/webhooks.js';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { serializeCustomer } from '../billing/customers/serialize.js';
import { generateSecret, signWebhook, verifyWebhook } from './signing.js';

const secret = generateSecret();
// The customer as the API serializes it, so the SDK's event schema has what it checks.
const customer = serializeCustomer({
  id: '6b1f1b52-0c57-4c43-9a52-5a3f7d1f3c11',
  organizationId: '9d0c1d51-7f3b-4d56-8f0e-2b6f0f1b2c3d',
  externalId: null,
  email: 'ada@example.com',
  emailVerified: false,
  name: 'Ada',
  billingName: 'Ada',
  billingAddress: null,
  taxId: null,
  locale: null,
  metadata: {},
  createdAt: new Date('2026-01-02T03:04:05.000Z'),
  modifiedAt: null,
  deletedAt: null,
});
const body = JSON.stringify({ type: 'customer.created', timestamp: '2026-01-02T03:04:05.000Z', data: customer });
const eventId = '0f0e0d0c-0b0a-4909-8807-060504030201';

/** What Polar's SDK 0.49 does on the receiving end, message included. */
function polarVerifies(payload: string, headers: Record<string, string>, key = secret) {
  return validateEvent(payload, headers, key);
}

const standardVerifier = (key: string) => new Webhook(Buffer.from(key, 'utf8').toString('base64'));

describe('signWebhook', () => {
  it('makes the three Standard Webhooks headers, keyed on the UTF-8 bytes of the whole secret', () => {
    const headers = signWebhook(secret, { id: eventId, timestamp: new Date(), body });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(headers['webhook-id']).toBe(eventId);
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it("is accepted by Polar's SDK validateEvent, which answers the parsed event", () => {
    const event = polarVerifies(body, { ...signWebhook(secret, { id: eventId, timestamp: new Date(), body }) });
    expect(event).toMatchObject({ type: 'customer.created', data: { id: customer.id, email: 'ada@example.com' } });
  });

  it('is accepted by the standardwebhooks verifier and by verifyWebhook', () => {
    const headers = { ...signWebhook(secret, { id: eventId, timestamp: new Date(), body }) };
    expect(standardVerifier(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(verifyWebhook(secret, body, headers)).toEqual(JSON.parse(body));
  });

  it('is refused when one byte of the body changes', () => {
    const headers = { ...signWebhook(secret, { id: eventId, timestamp: new Date(), body }) };
    const tampered = body.replace('ada@example.com', 'adb@example.com');
    expect(tampered.length).toBe(body.length);
    expect(() => polarVerifies(tampered, headers)).toThrow(new PolarVerificationError('No matching signature found'));
    expect(() => standardVerifier(secret).verify(tampered, headers)).toThrow(new WebhookVerificationError('No matching signature found'));
  });

  it('is refused when the timestamp is more than 300 seconds old, or as far in the future', () => {
    const stale = { ...signWebhook(secret, { id: eventId, timestamp: new Date(Date.now() - 301_000), body }) };
    expect(() => polarVerifies(body, stale)).toThrow(new PolarVerificationError('Message timestamp too old'));
    expect(() => standardVerifier(secret).verify(body, stale)).toThrow('Message timestamp too old');
    const early = { ...signWebhook(secret, { id: eventId, timestamp: new Date(Date.now() + 301_000), body }) };
    expect(() => polarVerifies(body, early)).toThrow(new PolarVerificationError('Message timestamp too new'));
    expect(() => standardVerifier(secret).verify(body, early)).toThrow('Message timestamp too new');
    // Just inside the tolerance is fine.
    const recent = { ...signWebhook(secret, { id: eventId, timestamp: new Date(Date.now() - 290_000), body }) };
    expect(polarVerifies(body, recent)).toMatchObject({ type: 'customer.created' });
  });

  it('is refused under another secret, and when headers are missing or malformed', () => {
    const headers = { ...signWebhook(secret, { id: eventId, timestamp: new Date(), body }) };
    const other = generateSecret();
    expect(() => polarVerifies(body, headers, other)).toThrow(new PolarVerificationError('No matching signature found'));
    expect(() => standardVerifier(other).verify(body, headers)).toThrow('No matching signature found');
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    expect(() => polarVerifies(body, unsigned)).toThrow(new PolarVerificationError('Missing required headers'));
    expect(() => standardVerifier(secret).verify(body, { ...headers, 'webhook-timestamp': 'soon' })).toThrow('Invalid Signature Headers');
  });

  it('signs the same id and body the same way at the same second, and differently at another', () => {
    const at = new Date('2030-05-06T07:08:09.999Z');
    const a = signWebhook(secret, { id: eventId, timestamp: at, body });
    const b = signWebhook(secret, { id: eventId, timestamp: new Date('2030-05-06T07:08:09.000Z'), body });
    const c = signWebhook(secret, { id: eventId, timestamp: new Date('2030-05-06T07:08:10.000Z'), body });
    expect(a).toEqual(b);
    expect(c['webhook-signature']).not.toBe(a['webhook-signature']);
  });
});
