import { randomUUID } from 'node:crypto';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { grantForOrder, revokeForOrder, seedProductWithBenefits } from '../testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let stranger: SignedIn;
let organizationId: string;

const sdk = (token = owner.token) => polarSdk(daemon.url, token);
const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

const LICENSE = {
  type: 'license_keys' as const,
  description: 'Desktop licence',
  properties: { prefix: 'till', expires: { ttl: 1, timeframe: 'month' as const }, activations: { limit: 2, enableCustomerAdmin: true }, limitUsage: 5 },
};

/** Sells a product with a license-keys benefit to a new customer; answers the issued key as the API lists it. */
async function purchase(properties: Record<string, unknown> = LICENSE.properties) {
  const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, [{ ...LICENSE, properties } as never]);
  const orderId = randomUUID();
  await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId });
  const page = await sdk().licenseKeys.list({ organizationId, benefitId: seeded.benefitIds[0] });
  expect(page.result.items).toHaveLength(1);
  return { ...seeded, orderId, key: page.result.items[0] };
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Lena Licence' });
  stranger = await signUp(daemon.url, { name: 'Sam Stranger' });
  organizationId = await createOrganization(owner, 'Key Makers');
  await createOrganization(stranger, 'Elsewhere');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/license-keys', () => {
  it('answers 401 Unauthorized to the seller endpoints without credentials', async () => {
    expect((await v1(undefined, 'GET', '/license-keys/')).status).toBe(401);
    expect((await v1(undefined, 'POST', '/license-keys/validate', { key: 'X', organization_id: organizationId })).status).toBe(401);
  });

  it('issues one key per grant with the benefit prefix, limits and an expiry a month out', async () => {
    const before = Date.now();
    const { key, customerId, benefitIds } = await purchase();
    expect(key.key).toMatch(/^TILL-[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
    expect(key).toMatchObject({ organizationId, customerId, benefitId: benefitIds[0], status: 'granted', limitActivations: 2, limitUsage: 5, usage: 0, validations: 0, lastValidatedAt: null });
    expect(key.displayKey).toBe(`****-${key.key.slice(-6)}`);
    const expiry = key.expiresAt!.getTime();
    expect(expiry).toBeGreaterThanOrEqual(before + 28 * 86_400_000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 31 * 86_400_000);
    const fetched = await sdk().licenseKeys.get({ id: key.id });
    expect(fetched).toMatchObject({ id: key.id, key: key.key, activations: [] });
    expect(fetched.customer).toMatchObject({ id: customerId });
  });

  it('validates a key, counting validations and usage, and refuses usage beyond the limit with a 400', async () => {
    const { key } = await purchase();
    const first = await sdk().licenseKeys.validate({ key: key.key, organizationId, incrementUsage: 3 });
    expect(first).toMatchObject({ id: key.id, usage: 3, validations: 1 });
    expect(first.lastValidatedAt).toBeInstanceOf(Date);
    const over = await v1(owner.token, 'POST', '/license-keys/validate', { key: key.key, organization_id: organizationId, increment_usage: 3 });
    expect(over.status).toBe(400);
    expect(await over.json()).toMatchObject({ error: 'BadRequest', detail: 'License key only has 2 more usages.' });
    // The refused request changed nothing.
    expect(await sdk().licenseKeys.get({ id: key.id })).toMatchObject({ usage: 3, validations: 1 });
  });

  it('answers 404 to a key that is unknown, or does not match the benefit or customer asked about', async () => {
    const { key } = await purchase();
    await expect(sdk().licenseKeys.validate({ key: 'TILL-NOPE', organizationId })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk().licenseKeys.validate({ key: key.key, organizationId, benefitId: randomUUID() })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(sdk().licenseKeys.validate({ key: key.key, organizationId, customerId: randomUUID() })).rejects.toBeInstanceOf(ResourceNotFound);
    // Another seller cannot probe this organization's keys.
    await expect(sdk(stranger.token).licenseKeys.validate({ key: key.key, organizationId })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('activates up to the limit, checks conditions on validation, and frees a slot on deactivation', async () => {
    const { key } = await purchase();
    const portal = polarSdk(daemon.url, '');
    const laptop = await portal.customerPortal.licenseKeys.activate({ key: key.key, organizationId, label: 'laptop', conditions: { major: 2 }, meta: { os: 'linux' } });
    expect(laptop).toMatchObject({ licenseKeyId: key.id, label: 'laptop', meta: { os: 'linux' }, licenseKey: { id: key.id } });
    await portal.customerPortal.licenseKeys.activate({ key: key.key, organizationId, label: 'desktop' });
    const third = portal.customerPortal.licenseKeys.activate({ key: key.key, organizationId, label: 'tablet' });
    await expect(third).rejects.toBeInstanceOf(NotPermitted);
    await expect(third).rejects.toMatchObject({ detail: 'License key activation limit already reached' });

    const valid = await portal.customerPortal.licenseKeys.validate({ key: key.key, organizationId, activationId: laptop.id, conditions: { major: 2 } });
    expect(valid.activation).toMatchObject({ id: laptop.id, label: 'laptop' });
    await expect(portal.customerPortal.licenseKeys.validate({ key: key.key, organizationId, activationId: laptop.id, conditions: { major: 3 } })).rejects.toBeInstanceOf(ResourceNotFound);

    await portal.customerPortal.licenseKeys.deactivate({ key: key.key, organizationId, activationId: laptop.id });
    await expect(portal.customerPortal.licenseKeys.deactivate({ key: key.key, organizationId, activationId: laptop.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(portal.customerPortal.licenseKeys.validate({ key: key.key, organizationId, activationId: laptop.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const tablet = await sdk().licenseKeys.activate({ key: key.key, organizationId, label: 'tablet' });
    expect((await sdk().licenseKeys.get({ id: key.id })).activations.map((a) => a.label).sort()).toEqual(['desktop', 'tablet']);
    expect(await sdk().licenseKeys.getActivation({ id: key.id, activationId: tablet.id })).toMatchObject({ id: tablet.id, licenseKey: { key: key.key } });
  });

  it('never lets concurrent activations pass the activation limit', async () => {
    const { key } = await purchase();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => v1(undefined, 'POST', '/customer-portal/license-keys/activate', { key: key.key, organization_id: organizationId, label: `host-${i}` })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(2);
    expect(results.filter((r) => r.status === 403)).toHaveLength(10);
  });

  it('never lets concurrent validations use more than the usage limit', async () => {
    const { key } = await purchase();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => v1(undefined, 'POST', '/customer-portal/license-keys/validate', { key: key.key, organization_id: organizationId, increment_usage: 1 })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 400)).toHaveLength(5);
    expect(await sdk().licenseKeys.get({ id: key.id })).toMatchObject({ usage: 5, validations: 5 });
  });

  it('refuses activation of a key without an activation limit, pointing to validate', async () => {
    const { key } = await purchase({ prefix: null });
    expect(key).toMatchObject({ limitActivations: null, limitUsage: null, expiresAt: null });
    expect(key.key).toMatch(/^[0-9A-F]{8}-/);
    const res = await v1(undefined, 'POST', '/customer-portal/license-keys/activate', { key: key.key, organization_id: organizationId, label: 'x' });
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toMatch(/does not support activations/);
    expect(await polarSdk(daemon.url, '').customerPortal.licenseKeys.validate({ key: key.key, organizationId, incrementUsage: 1000 })).toMatchObject({ usage: 1000 });
  });

  it('stops a revoked key from validating or activating, and gives the same key back on a re-grant', async () => {
    const { key, customerId, productId, orderId } = await purchase();
    await revokeForOrder(daemon, { organizationId, customerId, orderId });
    expect(await sdk().licenseKeys.get({ id: key.id })).toMatchObject({ status: 'revoked' });
    const validate = await v1(undefined, 'POST', '/customer-portal/license-keys/validate', { key: key.key, organization_id: organizationId });
    expect(validate.status).toBe(404);
    expect((await validate.json()).detail).toBe('License key is no longer active.');
    const activate = await v1(undefined, 'POST', '/customer-portal/license-keys/activate', { key: key.key, organization_id: organizationId, label: 'x' });
    expect(activate.status).toBe(403);
    await grantForOrder(daemon, { organizationId, customerId, productId, orderId });
    expect(await sdk().licenseKeys.get({ id: key.id })).toMatchObject({ status: 'granted', key: key.key });
    expect((await sdk().licenseKeys.list({ organizationId, benefitId: key.benefitId })).result.items).toHaveLength(1);
  });

  it('treats a key as expired once the organization clock passes its expiry', async () => {
    const owned = await signUp(daemon.url, { name: 'Tim Time' });
    const sandboxOrg = await createOrganization(owned, 'Time Travellers');
    const seeded = await seedProductWithBenefits(daemon, owned.token, sandboxOrg, [LICENSE as never]);
    await grantForOrder(daemon, { organizationId: sandboxOrg, customerId: seeded.customerId, productId: seeded.productId, orderId: randomUUID() });
    const [key] = (await polarSdk(daemon.url, owned.token).licenseKeys.list({ organizationId: sandboxOrg })).result.items;
    expect((await v1(owned.token, 'PATCH', `/organizations/${sandboxOrg}/clock`, { sandbox: true })).status).toBe(200);
    expect((await v1(owned.token, 'POST', `/organizations/${sandboxOrg}/clock/advance`, { by: '+2month' })).status).toBe(200);
    const res = await v1(undefined, 'POST', '/customer-portal/license-keys/validate', { key: key.key, organization_id: sandboxOrg });
    expect(res.status).toBe(404);
    expect((await res.json()).detail).toBe('License key has expired.');
  });

  it('updates status, usage, limits and expiry, and refuses a usage above the limit', async () => {
    const { key } = await purchase();
    const updated = await sdk().licenseKeys.update({ id: key.id, licenseKeyUpdate: { status: 'disabled', limitUsage: 10, usage: 4, expiresAt: null } });
    expect(updated).toMatchObject({ status: 'disabled', limitUsage: 10, usage: 4, expiresAt: null, limitActivations: 2 });
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    const res = await v1(owner.token, 'PATCH', `/license-keys/${key.id}`, { usage: 11 });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].loc).toEqual(['body', 'usage']);
    await expect(sdk(stranger.token).licenseKeys.update({ id: key.id, licenseKeyUpdate: { status: 'granted' } })).rejects.toBeInstanceOf(ResourceNotFound);
    expect(await sdk().licenseKeys.get({ id: key.id })).toMatchObject({ status: 'disabled', usage: 4 });
  });

  it('keeps keys of other organizations out of lists and gets', async () => {
    const { key } = await purchase();
    expect((await sdk(stranger.token).licenseKeys.list({})).result.items).toEqual([]);
    await expect(sdk(stranger.token).licenseKeys.get({ id: key.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const bad = await v1(owner.token, 'POST', '/license-keys/validate', { organization_id: organizationId });
    expect(bad.status).toBe(422);
  });

  it('records benefit_grant.created with the key in the grant properties', async () => {
    const { key } = await purchase();
    const events = await listEvents(daemon.db, organizationId, { type: 'benefit_grant.created' });
    const event = events.find((e) => (e.payload.data as { properties: { license_key_id?: string } }).properties.license_key_id === key.id);
    expect(event?.payload.data).toMatchObject({ is_granted: true, properties: { license_key_id: key.id, display_key: key.displayKey }, benefit: { type: 'license_keys' } });
  });
  it('names no seat member before Polar-Version 2026-10 and a null one from it, on every key-bearing answer', async () => {
    const { key } = await purchase();
    const read = (version: string, path: string, init: RequestInit = {}) =>
      fetch(`${daemon.url}/v1${path}`, { ...init, headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json', 'polar-version': version } }).then((res) => res.json());
    const current = await read('2026-04', `/license-keys/${key.id}`);
    expect(current.id).toBe(key.id);
    expect(current).not.toHaveProperty('member_id');
    expect(current).not.toHaveProperty('member');
    const next = await read('2026-10', `/license-keys/${key.id}`);
    expect(next).toMatchObject({ id: key.id, member_id: null, member: null });
    const listed = await read('2026-10', `/license-keys/?organization_id=${organizationId}`);
    expect(listed.items.every((item: Record<string, unknown>) => item.member === null && item.member_id === null)).toBe(true);
    const validated = await read('2026-10', '/license-keys/validate', { method: 'POST', body: JSON.stringify({ key: key.key, organization_id: organizationId }) });
    expect(validated).toMatchObject({ id: key.id, member_id: null, member: null });
    const activated = await read('2026-10', '/license-keys/activate', { method: 'POST', body: JSON.stringify({ key: key.key, organization_id: organizationId, label: 'laptop' }) });
    expect(activated.license_key).toMatchObject({ id: key.id, member_id: null, member: null });
  });

  it('rotates a key: a new key with the prefix replaces it (the old one no longer validates), limits, usage and activations stay, and the grant shows the new display key', async () => {
    const { key, customerId, benefitIds } = await purchase();
    await sdk().licenseKeys.validate({ key: key.key, organizationId, incrementUsage: 2 });
    await sdk().licenseKeys.activate({ key: key.key, organizationId, label: 'laptop' });
    const rotated = await v1(owner.token, 'POST', `/license-keys/${key.id}/rotate`);
    expect(rotated.status).toBe(200);
    const body = await rotated.json();
    expect(body.key).toMatch(/^TILL-[0-9A-F-]{36}$/);
    expect(body.key).not.toBe(key.key);
    expect(body).toMatchObject({ id: key.id, customer_id: customerId, benefit_id: benefitIds[0], status: 'granted', usage: 2, validations: 1, limit_usage: 5, limit_activations: 2, display_key: `****-${body.key.slice(-6)}` });
    expect(body.modified_at).toEqual(expect.any(String));
    await expect(sdk().licenseKeys.validate({ key: key.key, organizationId })).rejects.toBeInstanceOf(ResourceNotFound);
    expect(await sdk().licenseKeys.validate({ key: body.key, organizationId })).toMatchObject({ id: key.id, validations: 2 });
    expect((await sdk().licenseKeys.get({ id: key.id })).activations.map((a) => a.label)).toEqual(['laptop']);
    const [grant] = (await sdk().benefitGrants.list({ customerId, isGranted: true })).result.items.filter((g) => g.benefitId === benefitIds[0]);
    expect(grant!.properties).toMatchObject({ licenseKeyId: key.id, displayKey: body.display_key });
  });

  it('refuses to rotate a revoked key with 400 RotateNotPermitted, changing nothing, and a key of another organization with 404', async () => {
    const { key, customerId, orderId } = await purchase();
    await revokeForOrder(daemon, { organizationId, customerId, orderId });
    const refused = await v1(owner.token, 'POST', `/license-keys/${key.id}/rotate`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'RotateNotPermitted', detail: expect.stringContaining('Current status: revoked. Allowed statuses: disabled, granted.') });
    expect((await sdk().licenseKeys.get({ id: key.id })).key).toBe(key.key);
    expect((await v1(stranger.token, 'POST', `/license-keys/${key.id}/rotate`)).status).toBe(404);
    expect((await v1(undefined, 'POST', `/license-keys/${key.id}/rotate`)).status).toBe(401);
  });

  it('lets a disabled key be rotated, and its customer rotate it from the portal, but not another customer', async () => {
    const { key, customerId } = await purchase();
    await sdk().licenseKeys.update({ id: key.id, licenseKeyUpdate: { status: 'disabled' } });
    const rotated = await (await v1(owner.token, 'POST', `/license-keys/${key.id}/rotate`)).json();
    expect(rotated).toMatchObject({ id: key.id, status: 'disabled' });
    const session = async (id: string) => (await sdk().customerSessions.create({ customerId: id })).token;
    const mine = await v1(await session(customerId), 'POST', `/customer-portal/license-keys/${key.id}/rotate`);
    expect(mine.status).toBe(200);
    const again = await mine.json();
    expect(again).toMatchObject({ id: key.id, customer_id: customerId, status: 'disabled' });
    expect(again.key).not.toBe(rotated.key);
    const other = await purchase();
    expect((await v1(await session(other.customerId), 'POST', `/customer-portal/license-keys/${key.id}/rotate`)).status).toBe(404);
    expect((await sdk().licenseKeys.get({ id: key.id })).key).toBe(again.key);
  });
});
