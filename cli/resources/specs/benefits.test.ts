import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { tempConfigDir, till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Benefit Shop');
});
afterAll(() => daemon?.close());

describe('till benefits, scripted with --json', () => {
  it('creates, gets, lists, updates (repeating the type for the API) and deletes a custom benefit', async () => {
    const created = await tillJson(['benefits', 'create', '--type', 'custom', '--description', 'Office hours', '--note', 'Book a call', '--metadata', 'team=cs'], acme.env);
    expect(created).toMatchObject({ type: 'custom', description: 'Office hours', organization_id: acme.organizationId, properties: { note: 'Book a call' }, metadata: { team: 'cs' } });
    expect(await tillJson(['benefits', 'get', created.id], acme.env)).toEqual(created);

    const listed = await tillJson(['benefits', 'list', '--type', 'custom', '--metadata', 'team=cs'], acme.env);
    expect(listed.items.map((benefit: { id: string }) => benefit.id)).toEqual([created.id]);

    const updated = await tillJson(['benefits', 'update', created.id, '--description', 'Office hours+'], acme.env);
    expect(updated).toMatchObject({ id: created.id, type: 'custom', description: 'Office hours+' });

    expect(await tillJson(['benefits', 'delete', created.id, '--yes'], acme.env)).toEqual({ id: created.id, deleted: true });
    const after = await till(['benefits', 'get', created.id, '--json'], acme.env);
    // Deleting soft-deletes: the benefit is either gone or shown as deleted.
    if (after.exitCode === 0) expect(JSON.parse(after.stdout).is_deleted).toBe(true);
    else expect(after.exitCode).toBe(4);
  });

  it('takes the properties of any type with --property key=value and key:=JSON', async () => {
    const keys = await tillJson(
      ['benefits', 'create', '--type', 'license_keys', '--description', 'License key', '--property', 'prefix=ACME', '--property', 'expires:={"ttl":1,"timeframe":"year"}', '--property', 'limit_usage:=10'],
      acme.env,
    );
    expect(keys.properties).toMatchObject({ prefix: 'ACME', expires: { ttl: 1, timeframe: 'year' }, limit_usage: 10 });
  });

  it('grants an uploaded file as a downloadable with --file', async () => {
    const path = join(tempConfigDir(), 'manual.pdf');
    writeFileSync(path, '%PDF-1.4 a tiny manual');
    const file = await tillJson(['files', 'upload', path], acme.env);
    const benefit = await tillJson(['benefits', 'create', '--type', 'downloadables', '--description', 'The manual', '--file', file.id], acme.env);
    expect(benefit.properties.files).toEqual([file.id]);
  });

  it('asks for nothing off a terminal: a missing --type is exit 2 naming it', async () => {
    const result = await till(['benefits', 'create', '--description', 'Untyped'], acme.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Missing --type (needed to create a benefit).');
  });

  it('refuses a --type that is not a benefit type, naming the choices (exit 5)', async () => {
    const result = await till(['benefits', 'create', '--type', 'pony', '--description', 'Nope'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('--type "pony": expected one of custom, discord');
  });
});
