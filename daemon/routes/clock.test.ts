import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleJob } from '../../core/jobs/jobs.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const call = (method: string, path: string, body?: unknown, token = owner.token) => v1Request(daemon.url, token, method, path, body);

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Clara Clock' });
  organizationId = await createOrganization(owner, 'Clockwork');
});
afterAll(() => daemon?.close());

describe('/v1/organizations/{id}/clock', () => {
  it('shows real time for an organization that is not a sandbox, and refuses to advance it', async () => {
    const res = await call('GET', `/organizations/${organizationId}/clock`);
    expect(res.status).toBe(200);
    const clock = await res.json();
    expect(clock).toMatchObject({ organization_id: organizationId, sandbox: false, offset_seconds: 0, pending_jobs: [] });
    expect(Math.abs(Date.parse(clock.now) - Date.now())).toBeLessThan(5000);
    const refused = await call('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1month' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: 'NOT_SANDBOX' });
  });

  it('moves a sandbox organization’s clock by a calendar step and runs the work that falls due', async () => {
    expect((await call('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
    const before = Date.now();
    // Work an organization has due in two weeks (an unknown kind fails: it shows as failed, not as an error).
    await scheduleJob(daemon.db, { organizationId, kind: 'test.unknown', subjectId: organizationId, runAt: new Date(before + 14 * 86_400_000) });
    const res = await call('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1month' });
    expect(res.status).toBe(200);
    const clock = await res.json();
    expect(clock).toMatchObject({ sandbox: true, jobs_run: 1, jobs_failed: 1 });
    const days = (Date.parse(clock.now) - before) / 86_400_000;
    expect(days).toBeGreaterThanOrEqual(28);
    expect(days).toBeLessThan(32);
    expect(clock.pending_jobs).toEqual([expect.objectContaining({ kind: 'test.unknown', attempts: 1 })]);

    const to = new Date(Date.parse(clock.now) + 2 * 86_400_000).toISOString();
    const moved = await (await call('POST', `/organizations/${organizationId}/clock/advance`, { to })).json();
    // The clock keeps running after the advance: `now` is the target plus the milliseconds since.
    expect(Date.parse(moved.now) - Date.parse(to)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(moved.now) - Date.parse(to)).toBeLessThan(1000);
  });

  it('answers bad input with a 422 naming the field, and leaves the clock where it was', async () => {
    const before = await (await call('GET', `/organizations/${organizationId}/clock`)).json();
    for (const body of [{ by: 'soon' }, { by: '+9000y' }, { by: '+999999y' }, { by: '+1month', to: '2099-01-01T00:00:00Z' }, {}, { to: '2001-01-01T00:00:00Z' }, { to: 'yesterday' }]) {
      const res = await call('POST', `/organizations/${organizationId}/clock/advance`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      const answer = await res.json();
      expect(answer.detail[0].loc[0]).toBe('body');
    }
    const after = await (await call('GET', `/organizations/${organizationId}/clock`)).json();
    expect(after.offset_seconds).toBe(before.offset_seconds);
  });

  it('keeps an advanced organization a sandbox', async () => {
    const res = await call('PATCH', `/organizations/${organizationId}/clock`, { sandbox: false });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'CLOCK_ADVANCED' });
  });

  it('does not show or move another organization’s clock', async () => {
    const mallory = await signUp(daemon.url, { name: 'Mallory' });
    await createOrganization(mallory, 'Elsewhere');
    expect((await call('GET', `/organizations/${organizationId}/clock`, undefined, mallory.token)).status).toBe(404);
    expect((await call('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1d' }, mallory.token)).status).toBe(404);
    expect((await call('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true }, mallory.token)).status).toBe(404);
  });
});

describe('concurrent advances', () => {
  it('are taken one after another: six +1month steps move the clock six months, and each caller is told its own step', async () => {
    const id = await createOrganization(owner, 'Rush Hour');
    expect((await call('PATCH', `/organizations/${id}/clock`, { sandbox: true })).status).toBe(200);
    const before = Date.now();
    const answers = await Promise.all(Array.from({ length: 6 }, () => call('POST', `/organizations/${id}/clock/advance`, { by: '+1month' })));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const steps = ((await Promise.all(answers.map((res) => res.json()))) as { now: string; advanced_from: string }[])
      .map((step) => ({ from: Date.parse(step.advanced_from), to: Date.parse(step.now) }))
      .sort((a, b) => a.from - b.from);
    const DAY = 86_400_000;
    for (const [index, step] of steps.entries()) {
      // Each step is one calendar month from where that caller found the clock…
      expect((step.to - step.from) / DAY).toBeGreaterThanOrEqual(28);
      expect((step.to - step.from) / DAY).toBeLessThan(32);
      // …and starts where the previous one ended: no step overlaps another, none goes back.
      if (index > 0) expect(step.from).toBeGreaterThanOrEqual(steps[index - 1]!.to);
    }
    const clock = await (await call('GET', `/organizations/${id}/clock`)).json();
    expect(Date.parse(clock.now)).toBeGreaterThanOrEqual(steps[5]!.to);
    const months = (Date.parse(clock.now) - before) / DAY;
    expect(months).toBeGreaterThanOrEqual(6 * 28);
    expect(months).toBeLessThan(6 * 32);
  });
});
