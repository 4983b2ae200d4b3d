import { randomUUID } from 'node:crypto';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../core/clock.js';
import { cycleBenefits, grantBenefits, revokeBenefitGrants, revokeCustomerBenefits } from '../../core/billing/benefit-grants/service.js';
import { guildTokenKey, mintGuildToken } from '../../core/billing/benefits/guild-token.js';
import { organizationClock } from '../../core/jobs/clock.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { grantForOrder, revokeForOrder, seedProductWithBenefits, uploadDownloadable } from '../testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let stranger: SignedIn;
let organizationId: string;
let meterId: string;
let guildToken: string;

const sdk = (token = owner.token) => polarSdk(daemon.url, token);
const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

/** One benefit of every type Till offers (the provider-backed ones have no credentials configured here). */
const everyType = () => [
  { type: 'custom', description: 'Priority support', properties: { note: 'Write to vip@example.test' } },
  { type: 'meter_credit', description: 'API credits', properties: { units: 100, rollover: false, meterId } },
  { type: 'discord', description: 'Discord role', properties: { guildToken, roleId: '998877', kickMember: false } },
  { type: 'github_repository', description: 'Repo access', properties: { repositoryOwner: 'acme', repositoryName: 'private', permission: 'pull' } },
  { type: 'license_keys', description: 'Licence', properties: {} },
];

const grantsOf = async (customerId: string, extra: Record<string, unknown> = {}) =>
  (await sdk().benefitGrants.list({ organizationId, customerId, limit: 100, ...extra })).result.items;
const eventsOf = async (type: Parameters<typeof listEvents>[2] extends infer O ? (O extends { type?: infer T } ? T : never) : never) => listEvents(daemon.db, organizationId, { type });
const creditsOf = (customerId: string) => daemon.db('meter_credits').where({ customer_id: customerId }).orderBy('seq');

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Gus Grants' });
  stranger = await signUp(daemon.url, { name: 'Sid Stranger' });
  organizationId = await createOrganization(owner, 'Grant Givers');
  await createOrganization(stranger, 'Other Shop');
  meterId = (await sdk().meters.create({ organizationId, name: 'API calls', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } })).id;
  guildToken = mintGuildToken(guildTokenKey((await daemon.auth.$context).secret), '112233445566778899');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/benefit-grants', () => {
  it('answers 401 Unauthorized without credentials', async () => {
    expect((await v1(undefined, 'GET', '/benefit-grants/')).status).toBe(401);
    expect((await v1(undefined, 'GET', `/benefits/${randomUUID()}/grants`)).status).toBe(401);
  });

  it('grants every benefit of a paid order, recording why discord and github could not be granted', async () => {
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, everyType() as never);
    const orderId = randomUUID();
    await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId });
    const grants = await grantsOf(seeded.customerId);
    expect(grants).toHaveLength(5);
    const byType = Object.fromEntries(grants.map((g) => [g.benefit.type, g]));
    for (const type of ['custom', 'meter_credit', 'license_keys']) {
      expect(byType[type], type).toMatchObject({ isGranted: true, isRevoked: false, orderId, subscriptionId: null, customerId: seeded.customerId });
      expect(byType[type]!.grantedAt).toBeInstanceOf(Date);
      expect(byType[type]!.error ?? null).toBeNull();
    }
    for (const [type, service] of [['discord', 'Discord'], ['github_repository', 'GitHub']] as const) {
      expect(byType[type], type).toMatchObject({ isGranted: false, isRevoked: false, grantedAt: null });
      expect(byType[type]!.error).toMatchObject({ type: 'ProviderNotConfigured', message: expect.stringContaining(`no ${service} integration configured`) });
    }
    // The SDK's BenefitGrant has no meter-credit properties (only its webhook does): read them raw.
    const raw = await (await v1(owner.token, 'GET', `/benefit-grants/?customer_id=${seeded.customerId}&limit=100`)).json();
    const meterGrant = raw.items.find((g: { benefit: { type: string } }) => g.benefit.type === 'meter_credit');
    expect(meterGrant.properties).toMatchObject({ last_credited_meter_id: meterId, last_credited_units: 100 });
    expect(await creditsOf(seeded.customerId)).toMatchObject([{ meter_id: meterId, kind: 'credited' }]);
    // The embedded customer and benefit are the API's own shapes.
    expect(byType.custom!.customer).toMatchObject({ id: seeded.customerId, organizationId });
    expect(byType.custom!.benefit).toMatchObject({ type: 'custom', properties: { note: 'Write to vip@example.test' } });
  });

  it('grants once per order however often fulfilment runs, and announces the customer state once', async () => {
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, [everyType()[0]] as never);
    const orderId = randomUUID();
    // Only this customer's announcements: metering's refresh jobs announce other customers of the organization meanwhile.
    const announcements = async () => (await eventsOf('customer.state_changed')).filter((e) => (e.payload.data as { id: string }).id === seeded.customerId).length;
    const before = await announcements();
    await Promise.all([1, 2, 3].map(() => grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId })));
    expect(await grantsOf(seeded.customerId)).toHaveLength(1);
    const created = (await eventsOf('benefit_grant.created')).filter((e) => (e.payload.data as { customer_id: string }).customer_id === seeded.customerId);
    expect(created).toHaveLength(1);
    expect((await announcements()) - before).toBe(1);
    // A second order of the same product is a grant of its own.
    await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId: randomUUID() });
    expect(await grantsOf(seeded.customerId)).toHaveLength(2);
  });

  it('revokes what an order granted, takes back meter credits, and filters by is_granted', async () => {
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, everyType().slice(0, 3) as never);
    const orderId = randomUUID();
    await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId });
    await revokeForOrder(daemon, { organizationId, customerId: seeded.customerId, orderId });
    const grants = await grantsOf(seeded.customerId);
    expect(grants.every((g) => g.isRevoked && !g.isGranted && g.revokedAt instanceof Date)).toBe(true);
    expect(await grantsOf(seeded.customerId, { isGranted: true })).toEqual([]);
    expect(await grantsOf(seeded.customerId, { isGranted: false })).toHaveLength(3);
    expect((await creditsOf(seeded.customerId)).map((c) => [c.kind, Number(c.units)])).toEqual([['credited', 100], ['credited', -100]]);
    const revokedEvents = (await eventsOf('benefit_grant.revoked')).filter((e) => (e.payload.data as { customer_id: string }).customer_id === seeded.customerId);
    expect(revokedEvents).toHaveLength(3);
    expect(revokedEvents[0]!.payload.data).toMatchObject({ is_revoked: true, previous_properties: expect.any(Object) });
    // Revoking again changes nothing.
    await revokeForOrder(daemon, { organizationId, customerId: seeded.customerId, orderId });
    expect((await eventsOf('benefit_grant.revoked')).filter((e) => (e.payload.data as { customer_id: string }).customer_id === seeded.customerId)).toHaveLength(3);
  });

  it('cycles a subscription’s grants: meter credits reset and are credited again', async () => {
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, everyType().slice(0, 2) as never);
    const subscriptionId = randomUUID();
    const input = { organizationId, customerId: seeded.customerId, subscriptionId };
    await daemon.db.transaction(async (trx) => grantBenefits(trx, await organizationClock(trx, systemClock, organizationId), { ...input, productId: seeded.productId, orderId: randomUUID() }));
    await daemon.db.transaction(async (trx) => cycleBenefits(trx, await organizationClock(trx, systemClock, organizationId), input));
    expect((await creditsOf(seeded.customerId)).map((c) => [c.kind, Number(c.units)])).toEqual([['credited', 100], ['reset', 0], ['credited', 100]]);
    const cycled = (await eventsOf('benefit_grant.cycled')).filter((e) => (e.payload.data as { customer_id: string }).customer_id === seeded.customerId);
    expect(cycled.map((e) => (e.payload.data as { benefit: { type: string } }).benefit.type).sort()).toEqual(['custom', 'meter_credit']);
    expect((await grantsOf(seeded.customerId)).every((g) => g.subscriptionId === subscriptionId && g.isGranted)).toBe(true);
  });

  it('lists the grants of one benefit, and hides grants from other organizations', async () => {
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, everyType().slice(0, 2) as never);
    await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId: randomUUID() });
    const page = await sdk().benefits.grants({ id: seeded.benefitIds[0]! });
    expect(page.result.items.map((g) => g.benefitId)).toEqual([seeded.benefitIds[0]]);
    expect(page.result.items[0]).toMatchObject({ customerId: seeded.customerId, isGranted: true });
    await expect(sdk(stranger.token).benefits.grants({ id: seeded.benefitIds[0]! })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await sdk(stranger.token).benefitGrants.list({})).result.items).toEqual([]);
    const byExternal = await sdk().benefitGrants.list({ externalCustomerId: seeded.externalId });
    expect(byExternal.result.items).toHaveLength(2);
    const sorted = await v1(owner.token, 'GET', '/benefit-grants/?sorting=bogus');
    expect(sorted.status).toBe(422);
  });

  it('shows the granted benefits in the customer state, and drops them once revoked', async () => {
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, everyType() as never);
    const orderId = randomUUID();
    await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId });
    const state = await sdk().customers.getState({ id: seeded.customerId });
    expect(state).toMatchObject({ id: seeded.customerId, activeSubscriptions: [] });
    expect(state.grantedBenefits.map((g) => g.benefitType).sort()).toEqual(['custom', 'license_keys', 'meter_credit']);
    const byExternal = await sdk().customers.getStateExternal({ externalId: seeded.externalId });
    expect(byExternal.grantedBenefits).toHaveLength(3);
    // The meter credit shows among the active meters once metering has refreshed the customer's meters (a job).
    await expect
      .poll(async () => (await sdk().customers.getState({ id: seeded.customerId })).activeMeters, { timeout: 15_000, interval: 250 })
      .toMatchObject([{ meterId, creditedUnits: 100, consumedUnits: 0, balance: 100 }]);
    // On PostgreSQL the state by id is read in one statement, by external id query by query: the same JSON.
    const raw = async (path: string) => (await v1(owner.token, 'GET', path)).json();
    expect(await raw(`/customers/${seeded.customerId}/state`)).toEqual(await raw(`/customers/external/${seeded.externalId}/state`));
    const announced = (await eventsOf('customer.state_changed')).filter((e) => (e.payload.data as { id: string }).id === seeded.customerId).at(-1)!.payload.data as { id: string; granted_benefits: unknown[] };
    expect(announced).toMatchObject({ id: seeded.customerId });
    expect(announced.granted_benefits).toHaveLength(3);
    await revokeForOrder(daemon, { organizationId, customerId: seeded.customerId, orderId });
    expect((await sdk().customers.getState({ id: seeded.customerId })).grantedBenefits).toEqual([]);
    await expect(sdk(stranger.token).customers.getState({ id: seeded.customerId })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('gives a downloadables grant signed links to its files, which stop working once the grant is revoked', async () => {
    const bytes = Buffer.from('%PDF-1.4 the customer guide');
    const fileId = await uploadDownloadable(daemon, owner.token, organizationId, bytes, 'Guide v1.pdf');
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, [{ type: 'downloadables', description: 'The guide', properties: { files: [fileId] } }] as never);
    const orderId = randomUUID();
    await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId });
    const [grant] = await grantsOf(seeded.customerId);
    expect(grant!.properties).toEqual({ files: [fileId] });

    const downloads = await (await v1(owner.token, 'GET', `/benefit-grants/${grant!.id}/downloads`)).json();
    expect(downloads.items).toHaveLength(1);
    const { file } = downloads.items[0];
    expect(file).toMatchObject({ id: fileId, name: 'Guide v1.pdf', size: bytes.length, download: { url: expect.stringContaining(`${daemon.url}/downloads/`) } });
    const fetched = await fetch(file.download.url);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-disposition')).toContain("filename*=UTF-8''Guide%20v1.pdf");
    expect(Buffer.from(await fetched.arrayBuffer()).equals(bytes)).toBe(true);

    // A tampered link, another organization, and a revoked grant get nothing.
    const tampered = file.download.url.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'));
    expect((await fetch(tampered)).status).toBe(404);
    expect((await v1(stranger.token, 'GET', `/benefit-grants/${grant!.id}/downloads`)).status).toBe(404);
    await revokeForOrder(daemon, { organizationId, customerId: seeded.customerId, orderId });
    expect((await fetch(file.download.url)).status).toBe(404);
    const revoked = await v1(owner.token, 'GET', `/benefit-grants/${grant!.id}/downloads`);
    expect(revoked.status).toBe(422);
  });

  it('lists a downloadables benefit’s files in its order with how many customers downloaded each and how many times (benefits.files)', async () => {
    const guide = await uploadDownloadable(daemon, owner.token, organizationId, Buffer.from('%PDF-1.4 guide'), 'Guide.pdf');
    const extras = await uploadDownloadable(daemon, owner.token, organizationId, Buffer.from('PK extras'), 'Extras.zip');
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, [{ type: 'downloadables', description: 'Files', properties: { files: [extras, guide] } }] as never);
    const benefitId = seeded.benefitIds[0]!;
    const listed = async (query = '') => (await v1(owner.token, 'GET', `/benefits/${benefitId}/files${query}`)).json();
    const before = await listed();
    expect(before.items.map((f: { id: string }) => f.id)).toEqual([extras, guide]);
    expect(before.items[1]).toMatchObject({ id: guide, organization_id: organizationId, name: 'Guide.pdf', service: 'downloadable', is_uploaded: true, size_readable: expect.any(String), downloaders: 0, downloads: 0 });
    expect(before.pagination).toEqual({ total_count: 2, max_page: 1 });

    // Two customers: the first fetches the guide twice, the second once, and nobody the extras.
    const download = async (customerId: string, orderId: string) => {
      await grantForOrder(daemon, { organizationId, customerId, productId: seeded.productId, orderId });
      const [grant] = (await grantsOf(customerId)).filter((g) => g.benefitId === benefitId);
      const links = await (await v1(owner.token, 'GET', `/benefit-grants/${grant!.id}/downloads`)).json();
      return links.items.find((item: { file: { id: string } }) => item.file.id === guide).file.download.url as string;
    };
    const first = await download(seeded.customerId, randomUUID());
    expect((await fetch(first)).status).toBe(200);
    expect((await fetch(first)).status).toBe(200);
    const other = await sdk().customers.create({ organizationId, email: `other-${randomUUID().slice(0, 6)}@example.test` });
    expect((await fetch(await download(other.id, randomUUID()))).status).toBe(200);
    const after = await listed();
    expect(after.items.map((f: { downloaders: number; downloads: number }) => [f.downloaders, f.downloads])).toEqual([[0, 0], [2, 3]]);
    expect((await listed('?limit=1&page=2')).items.map((f: { id: string }) => f.id)).toEqual([guide]);

    // Another benefit type, an unknown benefit and another organization's read as 404; no credentials 401.
    const custom = await sdk().benefits.create({ type: 'custom', description: 'Support', organizationId, properties: {} });
    expect((await v1(owner.token, 'GET', `/benefits/${custom.id}/files`)).status).toBe(404);
    expect((await v1(owner.token, 'GET', `/benefits/${randomUUID()}/files`)).status).toBe(404);
    expect((await v1(stranger.token, 'GET', `/benefits/${benefitId}/files`)).status).toBe(404);
    expect((await v1(undefined, 'GET', `/benefits/${benefitId}/files`)).status).toBe(401);
  });

  it('revokes every grant of a customer, or of a benefit, across orders, for the deletions that need it', async () => {
    const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, [everyType()[0], everyType()[4]] as never);
    for (const orderId of [randomUUID(), randomUUID()]) await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId });
    expect(await grantsOf(seeded.customerId, { isGranted: true })).toHaveLength(4);
    const inOrg = async <T>(run: (trx: Parameters<typeof grantBenefits>[0], clock: Parameters<typeof grantBenefits>[1]) => Promise<T>) =>
      daemon.db.transaction(async (trx) => run(trx, await organizationClock(trx, systemClock, organizationId)));

    await inOrg((trx, clock) => revokeBenefitGrants(trx, clock, seeded.benefitIds[1]!));
    const afterBenefit = await grantsOf(seeded.customerId, { isGranted: true });
    expect(afterBenefit.map((g) => g.benefit.type)).toEqual(['custom', 'custom']);
    expect((await sdk().licenseKeys.list({ benefitId: seeded.benefitIds[1]! })).result.items.map((k) => k.status)).toEqual(['revoked', 'revoked']);

    await inOrg((trx, clock) => revokeCustomerBenefits(trx, clock, organizationId, seeded.customerId));
    expect(await grantsOf(seeded.customerId, { isGranted: true })).toEqual([]);
    expect(await grantsOf(seeded.customerId, { isGranted: false })).toHaveLength(4);
    expect((await sdk().customers.getState({ id: seeded.customerId })).grantedBenefits).toEqual([]);
  });
});
