import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { newId } from '../db/columns.js';
import { dialectOf } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { claimDueJob, listJobs, runClaimedJob } from '../jobs/jobs.js';
import type { PaymentProcessor } from '../payments/processor.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { meteringJobs } from './customer-meters.js';
import { CUSTOMER_REFRESH_JOB, markCustomersDirty } from './events-repository.js';

let database: TestDatabase;
const NOW = new Date('2026-03-01T12:00:00.000Z');

async function newOrganization(): Promise<string> {
  const id = newId();
  await database.db('organization').insert({ id, name: 'Refresh Co', slug: `refresh-${id}`, createdAt: new Date().toISOString() });
  return id;
}

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateToLatest(database.db);
});
afterAll(async () => {
  await database?.destroy();
});

describe('the customer meter refresh job', () => {
  it("takes the organization's other due refreshes even when an ingest released its own claim meanwhile", async () => {
    const organizationId = await newOrganization();
    // Subjects without a customer: a refresh of them changes nothing, which is all this test needs.
    const subjects = Array.from({ length: 5 }, () => newId()).sort();
    await markCustomersDirty(database.db, organizationId, subjects, new Date(NOW.getTime() - 1000));
    const claimed = (await claimDueJob(database.db, NOW.getTime(), { organizationId }))!;
    expect(claimed.job.kind).toBe(CUSTOMER_REFRESH_JOB);
    // Given: the next ingest for the claimed customer marks it dirty again, which releases the claim.
    await markCustomersDirty(database.db, organizationId, [claimed.job.subjectId], NOW);

    // When the claimed run goes ahead
    const handlers = meteringJobs;
    await runClaimedJob({ db: database.db, payments: {} as PaymentProcessor, baseUrl: 'http://till.test', handlers }, claimed, fixedClock(NOW));

    // Then it took the four others with it, and the claimed customer is due again for the ingest that came after.
    const left = (await listJobs(database.db, organizationId)).filter((job) => job.kind === CUSTOMER_REFRESH_JOB);
    expect(left.map((job) => job.subjectId)).toEqual([claimed.job.subjectId]);
  });

  it('leaves a due refresh as it is when another ingest marks its customer, and releases a claimed one', async () => {
    const organizationId = await newOrganization();
    const [due, claimedSubject, later] = Array.from({ length: 3 }, () => newId()).sort();
    await markCustomersDirty(database.db, organizationId, [due, claimedSubject], new Date(NOW.getTime() - 5000));
    await markCustomersDirty(database.db, organizationId, [later], new Date(NOW.getTime() + 60_000));
    await database.db('jobs').where({ kind: CUSTOMER_REFRESH_JOB, subject_id: claimedSubject }).update({ locked_by: 'a refresh run', locked_until_ms: NOW.getTime() + 30_000 });
    // A row's version: PostgreSQL's xmin changes whenever the row is written; SQLite counts the rows a statement changed.
    const pg = dialectOf(database.db) === 'postgres';
    const version = async (subject: string) => (pg ? (await database.db('jobs').where({ kind: CUSTOMER_REFRESH_JOB, subject_id: subject }).first(database.db.raw('xmin::text as v'))).v : undefined);
    const dueBefore = await version(due);
    const changesBefore = pg ? 0 : Number((await database.db.raw('select total_changes() as c'))[0].c);

    // When an ingest marks all three dirty now
    await markCustomersDirty(database.db, organizationId, [due, claimedSubject, later], NOW);

    const jobs = new Map((await listJobs(database.db, organizationId)).map((job) => [job.subjectId, job]));
    // The due one keeps its earlier time and was not written at all; the claimed one is released and due now; the
    // later one is due now.
    expect(jobs.get(due)!.runAt.getTime()).toBe(NOW.getTime() - 5000);
    if (pg) expect(await version(due)).toBe(dueBefore);
    else expect(Number((await database.db.raw('select total_changes() as c'))[0].c) - changesBefore).toBe(2);
    const released = await database.db('jobs').where({ kind: CUSTOMER_REFRESH_JOB, subject_id: claimedSubject }).first();
    expect(released.locked_by).toBeNull();
    expect(Number(released.run_at_ms)).toBe(NOW.getTime());
    expect(jobs.get(later)!.runAt.getTime()).toBe(NOW.getTime());
  });
});
