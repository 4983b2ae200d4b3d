import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CURRENT_API_VERSION } from '../billing/shared/api-version.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { fanOutEvents, recordAttempts, type MadeAttempt } from './delivery.js';
import { recordEvent } from './outbox.js';
import { claimDueRun, insertEndpoint, listEndpointEvents, type ClaimedDelivery } from './repository.js';

// The claim and the recording of attempts on a real database, with the clock in the test's hands: which event an
// endpoint's turn gives, and what a run's answers write.
let database: TestDatabase;
const start = new Date('2026-03-01T10:00:00Z');
const clock = { now: () => start };
const LEASE_MS = 10_000;
const settings = { retryBaseMs: 60_000 };

// A database each: a claim takes any endpoint's due event.
beforeEach(async () => {
  database = await createTestDatabase({ migrated: true });
});
afterEach(async () => {
  await database?.destroy();
});

/** An organization with `endpoints` endpoints taking customer.updated, and `events` of them fanned out to each. */
async function queued(endpoints: number, events: number) {
  const { db } = database;
  const organizationId = randomUUID();
  await db('organization').insert({ id: organizationId, name: 'Queue', slug: `queue-${organizationId.slice(0, 8)}`, createdAt: start.toISOString() });
  const ids: string[] = [];
  for (let i = 0; i < endpoints; i++) {
    const id = randomUUID();
    ids.push(id);
    await insertEndpoint(db, {
      id,
      organizationId,
      url: `http://127.0.0.1:9/${i}`,
      name: null,
      format: 'raw',
      apiVersion: CURRENT_API_VERSION,
      secret: 'whsec_test-secret-test-secret-test-secret',
      events: ['customer.updated'],
      enabled: true,
      consecutiveFailures: 0,
      disabledAt: null,
      disabledReason: null,
      createdAt: start,
      modifiedAt: null,
    });
  }
  await db.transaction(async (trx) => {
    for (let i = 0; i < events; i++) await recordEvent(trx, clock, { organizationId, type: 'customer.updated', data: { id: randomUUID(), n: i } });
  });
  while ((await fanOutEvents(db, clock)) > 0);
  return ids;
}

const ok = (claimed: ClaimedDelivery, at = start): MadeAttempt => ({ claimed, result: { succeeded: true, httpCode: 204, response: '', durationMs: 1 }, at });
const failed = (claimed: ClaimedDelivery, at = start): MadeAttempt => ({ claimed, result: { succeeded: false, httpCode: 500, response: 'no', durationMs: 1 }, at });
const seqs = (run: ClaimedDelivery[]) => run.map((c) => c.event.seq);
const claim = (nowMs: number, max = 1) => claimDueRun(database.db, nowMs, LEASE_MS, max);

describe('claiming and recording webhook attempts', () => {
  it("gives each endpoint its first waiting event, and nothing of an endpoint while that event is claimed", async () => {
    const [a, b] = await queued(2, 3);
    const now = start.getTime();
    const first = await claim(now);
    const second = await claim(now);
    expect([first[0].endpoint.id, second[0].endpoint.id].sort()).toEqual([a, b].sort());
    const firstSeqs = (await listEndpointEvents(database.db, first[0].endpoint.id)).map((e) => e.seq);
    expect(seqs(first)).toEqual([firstSeqs[0]]);
    // Both heads are claimed: the events behind them wait, though they are due.
    expect(await claim(now)).toEqual([]);
    expect(await recordAttempts(database.db, [ok(first[0])], settings)).toEqual(['succeeded']);
    expect(seqs(await claim(now))).toEqual([firstSeqs[1]]);
  });

  it('holds an endpoint whose first waiting event is retrying later, while its later events are due', async () => {
    const [endpointId] = await queued(1, 3);
    const now = start.getTime();
    const [head] = await claim(now, 3).then((run) => run.slice(0, 1));
    expect(await recordAttempts(database.db, [failed(head)], settings)).toEqual(['retrying']);
    expect(await claim(now, 3)).toEqual([]);
    const retried = await claim(now + 2 * settings.retryBaseMs, 3);
    expect(retried.map((c) => c.event.id)).toEqual((await listEndpointEvents(database.db, endpointId)).map((e) => e.id));
    expect(retried[0].event.attempts).toBe(1);
  });

  it("records a run's successes: an attempt row each, the events succeeded, the endpoint's run of failed events cleared", async () => {
    const [endpointId] = await queued(1, 3);
    await database.db('webhook_endpoints').where({ id: endpointId }).update({ consecutive_failures: 4 });
    const run = await claim(start.getTime(), 10);
    expect(run).toHaveLength(3);
    const at = new Date(start.getTime() + 5);
    expect(await recordAttempts(database.db, run.map((c) => ok(c, at)), settings)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const events = await listEndpointEvents(database.db, endpointId);
    expect(events.map((e) => [e.status, e.attempts, e.lastHttpCode, e.modifiedAt?.getTime()])).toEqual(events.map(() => ['succeeded', 1, 204, at.getTime()]));
    const deliveries = await database.db('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('endpoint_event_id');
    expect(deliveries.map((d) => [d.endpoint_event_id, Number(d.attempt), Boolean(d.succeeded), Number(d.http_code)])).toEqual(
      events.map((e) => [e.rowId, 1, true, 204]).sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    const endpoint = await database.db('webhook_endpoints').where({ id: endpointId }).first();
    expect(Number(endpoint.consecutive_failures)).toBe(0);
    expect(await claim(start.getTime() + 1000)).toEqual([]);
  });

  it('leaves events whose claim ran out to their new holder, and still writes the attempts that were made', async () => {
    const [endpointId] = await queued(1, 2);
    await database.db('webhook_endpoints').where({ id: endpointId }).update({ consecutive_failures: 2 });
    const stale = await claim(start.getTime(), 10);
    // Its lease runs out: another worker takes the same events.
    const taken = await claim(start.getTime() + LEASE_MS + 1, 10);
    expect(seqs(taken)).toEqual(seqs(stale));
    expect(await recordAttempts(database.db, stale.map((c) => ok(c)), settings)).toEqual(['lost', 'lost']);
    const events = await listEndpointEvents(database.db, endpointId);
    expect(events.map((e) => [e.status, e.attempts])).toEqual([['pending', 0], ['pending', 0]]);
    expect(await database.db('webhook_endpoint_events').where({ endpoint_id: endpointId }).pluck('locked_by')).toEqual([taken[0].token, taken[0].token]);
    expect(await database.db('webhook_deliveries').where({ endpoint_id: endpointId })).toHaveLength(2);
    expect(Number((await database.db('webhook_endpoints').where({ id: endpointId }).first()).consecutive_failures)).toBe(2);
    expect(await recordAttempts(database.db, taken.map((c) => ok(c)), settings)).toEqual(['succeeded', 'succeeded']);
    expect((await listEndpointEvents(database.db, endpointId)).map((e) => e.status)).toEqual(['succeeded', 'succeeded']);
  });
});
