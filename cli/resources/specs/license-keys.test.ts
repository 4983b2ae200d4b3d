import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantForOrder, seedProductWithBenefits } from '../../../daemon/testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;

/** A customer who bought a product with a license-keys benefit (two activations, five uses); answers its key. */
async function issuedKey() {
  const seeded = await seedProductWithBenefits(daemon, acme.user.token, acme.organizationId, [
    { type: 'license_keys', description: 'App licence', properties: { prefix: 'ACME', activations: { limit: 2, enableCustomerAdmin: false }, limitUsage: 5 } } as never,
  ]);
  await grantForOrder(daemon, { organizationId: acme.organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId: randomUUID() });
  const listed = await tillJson(['license-keys', 'list', '--benefit', seeded.benefitIds[0]!], acme.env);
  expect(listed.items).toHaveLength(1);
  return { ...seeded, key: listed.items[0] as { id: string; key: string; display_key: string } };
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Key Shop');
});
afterAll(() => daemon?.close());

describe('till license-keys, scripted with --json', () => {
  it('lists, validates with usage, activates, deactivates and updates a key', async () => {
    const { key, customerId } = await issuedKey();
    expect(key.key).toMatch(/^ACME-/);

    const validated = await tillJson(['license-keys', 'validate', key.key, '--increment-usage', '2'], acme.env);
    expect(validated).toMatchObject({ id: key.id, usage: 2, validations: 1, customer_id: customerId, activation: null });

    const laptop = await tillJson(['license-keys', 'activate', key.key, '--label', 'laptop', '--condition', 'major:=2', '--meta', 'os=linux'], acme.env);
    expect(laptop).toMatchObject({ label: 'laptop', meta: { os: 'linux' }, license_key: { id: key.id } });
    expect(await tillJson(['license-keys', 'validate', key.key, '--activation', laptop.id, '--condition', 'major:=2'], acme.env)).toMatchObject({ activation: { id: laptop.id } });

    const fetched = await tillJson(['license-keys', 'get', key.id], acme.env);
    expect(fetched.activations.map((a: { label: string }) => a.label)).toEqual(['laptop']);
    expect(await tillJson(['license-keys', 'deactivate', key.key, '--activation', laptop.id], acme.env)).toEqual({ deactivated: true, activation_id: laptop.id });
    expect((await tillJson(['license-keys', 'get', key.id], acme.env)).activations).toEqual([]);

    const updated = await tillJson(['license-keys', 'update', key.id, '--status', 'disabled', '--limit-usage', 'none', '--expires-at', '2030-01-01'], acme.env);
    expect(updated).toMatchObject({ status: 'disabled', limit_usage: null, expires_at: '2030-01-01T00:00:00.000Z' });
    expect((await tillJson(['license-keys', 'list', '--status', 'disabled'], acme.env)).items.map((k: { id: string }) => k.id)).toContain(key.id);
  });

  it('exits 4 when a key does not validate, and 5 with the reason when usage runs out', async () => {
    const { key } = await issuedKey();
    const unknown = await till(['license-keys', 'validate', 'ACME-NOT-A-KEY', '--json'], acme.env);
    expect(unknown.exitCode).toBe(4);
    const used = await till(['license-keys', 'validate', key.key, '--increment-usage', '6', '--json'], acme.env);
    expect(used.exitCode).toBe(5);
    expect(JSON.parse(used.stderr).error.message).toContain('only has 5 more usages');
    const noLabel = await till(['license-keys', 'activate', key.key, '--json'], acme.env);
    expect(noLabel.exitCode).toBe(2);
  });

  it('prints a readable validation for a person', async () => {
    const { key } = await issuedKey();
    const result = await till(['license-keys', 'validate', key.key], acme.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`${key.display_key} is valid (granted): usage 0 of 5, 1 validation.`);
    const table = await till(['license-keys', 'list'], acme.env);
    expect(table.stdout).toContain(key.display_key);
  });
});

describe('till customers state', () => {
  it('shows the benefits granted to a customer, by id and by external id', async () => {
    const { customerId, externalId } = await issuedKey();
    const state = await tillJson(['customers', 'state', customerId], acme.env);
    expect(state).toMatchObject({ id: customerId, active_subscriptions: [], active_meters: [] });
    expect(state.granted_benefits.map((g: { benefit_type: string }) => g.benefit_type)).toEqual(['license_keys']);
    expect((await tillJson(['customers', 'state', externalId, '--external'], acme.env)).id).toBe(customerId);
    const human = await till(['customers', 'state', customerId], acme.env);
    expect(human.stdout).toContain('Granted benefits');
    expect(human.stdout).toContain('license_keys');
    expect(human.stdout).toMatch(/Active subscriptions\s+none/);
    expect((await till(['customers', 'state', randomUUID(), '--json'], acme.env)).exitCode).toBe(4);
  });
});
