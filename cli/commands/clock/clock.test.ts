import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Clock Shop');
});
afterAll(() => daemon?.close());

describe('till clock', () => {
  it('marks the organization sandbox, advances it a month then to a date, and shows it', async () => {
    expect(await tillJson(['clock', 'sandbox', 'on'], acme.env)).toMatchObject({ organization_id: acme.organizationId, sandbox: true });
    const start = Date.now();
    const advanced = await tillJson(['clock', 'advance', '+1month'], acme.env);
    expect(advanced).toMatchObject({ sandbox: true, jobs_run: 0, jobs_failed: 0 });
    expect((Date.parse(advanced.now) - start) / 86_400_000).toBeGreaterThanOrEqual(28);

    const target = new Date(Date.parse(advanced.now) + 86_400_000 * 40).toISOString().slice(0, 10);
    const moved = await tillJson(['clock', 'advance', '--to', target], acme.env);
    expect(Date.parse(moved.now) - Date.parse(`${target}T00:00:00Z`)).toBeLessThan(5000);

    const shown = await till(['clock', 'show'], { ...acme.env, NO_COLOR: '1' });
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`${target}T00:00:0\\d\\.\\d{3}Z \\(sandbox\\)`));
    expect(shown.stdout).toMatch(/\d+ days? \d+ h ahead of real time/);
  });

  it('exits 2 with a hint when neither a step nor --to is given, and shows the API’s message for a bad step', async () => {
    const missing = await till(['clock', 'advance'], acme.env);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('+1month');
    const bad = await till(['clock', 'advance', '+1fortnight'], acme.env);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(/step/i);
  });
});
