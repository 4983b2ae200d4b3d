import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Field Shop');
});
afterAll(() => daemon?.close());

describe('till custom-fields, scripted with --json', () => {
  it('creates, gets, lists, updates and deletes a select field', async () => {
    const created = await tillJson(
      ['custom-fields', 'create', '--type', 'select', '--slug', 'size', '--name', 'Company size', '--label', 'How many are you?', '--option', 'small=1–10', '--option', 'large=11+'],
      acme.env,
    );
    expect(created).toMatchObject({
      type: 'select',
      slug: 'size',
      name: 'Company size',
      organization_id: acme.organizationId,
      properties: { form_label: 'How many are you?', options: [{ value: 'small', label: '1–10' }, { value: 'large', label: '11+' }] },
    });
    expect(await tillJson(['custom-fields', 'get', created.id], acme.env)).toEqual(created);
    const listed = await tillJson(['custom-fields', 'list', '--type', 'select'], acme.env);
    expect(listed.items.map((field: { id: string }) => field.id)).toEqual([created.id]);

    const renamed = await tillJson(['custom-fields', 'update', created.id, '--name', 'Team size'], acme.env);
    expect(renamed).toMatchObject({ id: created.id, type: 'select', name: 'Team size' });

    expect(await tillJson(['custom-fields', 'delete', created.id, '--yes'], acme.env)).toEqual({ id: created.id, deleted: true });
    expect((await till(['custom-fields', 'get', created.id], acme.env)).exitCode).toBe(4);
  });

  it('creates a checkbox field with no properties at all', async () => {
    const created = await tillJson(['custom-fields', 'create', '--type', 'checkbox', '--slug', 'terms', '--name', 'Terms'], acme.env);
    expect(created).toMatchObject({ type: 'checkbox', properties: {} });
  });

  it('refuses a slug the organization already uses, naming the flag (exit 5)', async () => {
    await tillJson(['custom-fields', 'create', '--type', 'text', '--slug', 'vat', '--name', 'VAT'], acme.env);
    const result = await till(['custom-fields', 'create', '--type', 'text', '--slug', 'vat', '--name', 'VAT again'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('slug (--slug)');
  });
});
