import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Customer Shop');
});
afterAll(() => daemon?.close());

describe('till customers, scripted with --json', () => {
  it('creates, gets, lists, updates and deletes a customer, by id and by external id', async () => {
    const created = await tillJson(['customers', 'create', '--email', 'ada@example.com', '--name', 'Ada', '--external-id', 'usr_1', '--country', 'fr', '--metadata', 'plan=pro'], acme.env);
    expect(created).toMatchObject({ type: 'individual', email: 'ada@example.com', name: 'Ada', external_id: 'usr_1', billing_address: { country: 'FR' }, metadata: { plan: 'pro' }, organization_id: acme.organizationId });

    expect(await tillJson(['customers', 'get', created.id], acme.env)).toEqual(created);
    expect((await tillJson(['customers', 'get', 'usr_1', '--external'], acme.env)).id).toBe(created.id);
    const byEmail = await tillJson(['customers', 'list', '--email', 'ada@example.com'], acme.env);
    expect(byEmail.items.map((customer: { id: string }) => customer.id)).toEqual([created.id]);
    const byMetadata = await tillJson(['customers', 'list', '--metadata', 'plan=pro'], acme.env);
    expect(byMetadata.items.map((customer: { id: string }) => customer.id)).toEqual([created.id]);

    const renamed = await tillJson(['customers', 'update', 'usr_1', '--external', '--name', 'Ada L.'], acme.env);
    expect(renamed).toMatchObject({ id: created.id, name: 'Ada L.' });

    expect(await tillJson(['customers', 'delete', 'usr_1', '--external', '--yes'], acme.env)).toEqual({ id: 'usr_1', deleted: true });
    expect((await till(['customers', 'get', created.id], acme.env)).exitCode).toBe(4);
  });

  it('passes --anonymize on to the API', async () => {
    const created = await tillJson(['customers', 'create', '--email', 'gdpr@example.com', '--name', 'Forget Me'], acme.env);
    await tillJson(['customers', 'delete', created.id, '--anonymize', '--yes'], acme.env);
    const row = await daemon.db('customers').where({ id: created.id }).first();
    expect(row.email).not.toBe('gdpr@example.com');
  });

  it('exits 5 on an email the organization already has, naming the flag', async () => {
    await tillJson(['customers', 'create', '--email', 'twice@example.com'], acme.env);
    const result = await till(['customers', 'create', '--email', 'TWICE@example.com'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('email (--email)');
  });
});
