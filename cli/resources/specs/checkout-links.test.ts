import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Link Shop');
});
afterAll(() => daemon?.close());

describe('till checkout-links, scripted with --json', () => {
  it('creates, gets, lists, updates and deletes a link whose URL opens a checkout', async () => {
    const ebook = await tillJson(['products', 'create', '--name', 'CLI Ebook', '--price', '1500:usd'], acme.env);
    const course = await tillJson(['products', 'create', '--name', 'CLI Course', '--price', '900:usd:month'], acme.env);
    const created = await tillJson(
      ['checkout-links', 'create', '--product', ebook.id, '--product', course.id, '--label', 'Launch', '--trial', '7day', '--success-url', 'https://shop.example/thanks', '--metadata', 'campaign=launch'],
      acme.env,
    );
    expect(created).toMatchObject({ label: 'Launch', trial_interval: 'day', trial_interval_count: 7, payment_processor: 'stripe', success_url: 'https://shop.example/thanks', metadata: { campaign: 'launch' }, organization_id: acme.organizationId });
    expect(created.products.map((p: { id: string }) => p.id)).toEqual([ebook.id, course.id]);
    expect(await tillJson(['checkout-links', 'get', created.id], acme.env)).toEqual(created);
    expect((await tillJson(['checkout-links', 'list', '--product', course.id], acme.env)).items.map((l: { id: string }) => l.id)).toEqual([created.id]);

    const opened = await fetch(created.url, { redirect: 'manual' });
    expect(opened.status).toBe(307);
    expect(opened.headers.get('location')).toMatch(new RegExp(`^${daemon.url}/checkout/polar_c_`));

    const updated = await tillJson(['checkout-links', 'update', created.id, '--product', course.id, '--label', 'Course only'], acme.env);
    expect(updated).toMatchObject({ id: created.id, label: 'Course only', products: [{ id: course.id }] });

    expect(await tillJson(['checkout-links', 'delete', created.id, '--yes'], acme.env)).toEqual({ id: created.id, deleted: true });
    expect((await till(['checkout-links', 'get', created.id], acme.env)).exitCode).toBe(4);
  });

  it('refuses an archived product, naming the flag (exit 5)', async () => {
    const old = await tillJson(['products', 'create', '--name', 'Old', '--price', '500:usd'], acme.env);
    await tillJson(['products', 'archive', old.id, '--yes'], acme.env);
    const result = await till(['checkout-links', 'create', '--product', old.id], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('Product is archived.');
  });
});
