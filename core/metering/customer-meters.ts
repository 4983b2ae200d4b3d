import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { fromDbInt, fromDbTime, fromDbTimeOrNull, newId, toDbTime } from '../db/columns.js';
import { dialectOf, type Database, type Executor } from '../db/database.js';
import { CoreError } from '../errors.js';
import { findCustomers, liveCustomersOf } from '../billing/customers/repository.js';
import { announceCustomerState, announceCustomerStates } from '../billing/customer-state/service.js';
import type { Customer } from '../billing/customers/schema.js';
import { offsetOf, type Page, type PageQuery } from '../billing/shared/pagination.js';
import type { SortCriterion } from '../billing/shared/query.js';
import { claimDueJobsOfKind, finishClaimedJobs, type JobHandlers } from '../jobs/jobs.js';
import { CUSTOMER_REFRESH_JOB, insertSystemEvent, markCustomersDirty } from './events-repository.js';
import { activeMeters, findMetersByIds } from './meters-repository.js';
import { isPartialMeter, quantityOf } from './partials.js';
import { customerUsage } from './quantities.js';
import { findUsage, invalidateUsage, rebuildUsage, usageOfCustomers, type Usage } from './usage.js';
import { METER_CREDITED, METER_RESET, type CustomerMeter, type Meter } from './schema.js';
import { read } from '../db/read.js';
import { compiledRead } from '../db/compiled-read.js';

const TABLE = 'customer_meters';
/** The meter-credit ledger the benefit-grants domain writes (migration 0016). */
const CREDITS = 'meter_credits';

function toCustomerMeter(row: Record<string, unknown>): CustomerMeter {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    meterId: String(row.meter_id),
    consumedUnits: Number(row.consumed_units),
    creditedUnits: Number(row.credited_units),
    balance: Number(row.balance),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** Polar's running sum that never goes below zero: a revocation cannot take more than was credited. */
export function nonNegativeRunningSum(values: Iterable<number>): number {
  let sum = 0;
  for (const value of values) sum = Math.max(0, sum + value);
  return sum;
}

export interface MeterBalance {
  consumedUnits: number;
  creditedUnits: number;
  balance: number;
  /** Whether anything (an event or a credit) fell in the current window. */
  active: boolean;
}

/**
 * How a balance reads a customer's consumption: `read` takes the usage row when it is whole and aggregates the
 * events otherwise; `refresh` rebuilds a row that is not whole; `rebuild` rebuilds it anyway (events of an
 * external id that had no customer when they were ingested may be missing from it).
 */
type UsageMode = 'read' | 'refresh' | 'rebuild';

async function consumption(db: Executor, meter: Meter, customer: { id: string; externalId: string | null }, resetAt: number | undefined, mode: UsageMode): Promise<{ quantity: number; events: number }> {
  if (!isPartialMeter(meter)) return customerUsage(db, meter, customer, { ingestedFrom: resetAt });
  const since = resetAt ?? 0;
  let usage = mode === 'rebuild' ? undefined : await findUsage(db, meter.id, customer.id);
  if (!isWhole(usage, since)) {
    if (mode === 'read') return customerUsage(db, meter, customer, { ingestedFrom: resetAt });
    usage = await rebuildUsage(db, meter, customer, since);
  }
  return consumedOf(meter, usage);
}

/** Whether a usage row holds all of the customer's events since `since` (else it is rebuilt from the events). */
const isWhole = (usage: Usage | undefined, since: number): usage is Usage => usage !== undefined && !usage.pending && usage.sinceMs === since;

const consumedOf = (meter: Meter, usage: Usage) => ({ quantity: quantityOf(meter.aggregation, usage.partial), events: usage.partial.events });

/**
 * A customer's standing on a meter now: consumption since the last reset (from its usage row, which every ingest
 * keeps up to date, see core/metering/usage.ts), credits since then (a non-negative running sum, in ledger order),
 * and the balance credited − consumed.
 */
export async function meterBalance(db: Executor, meter: Meter, customer: { id: string; externalId: string | null }, mode: UsageMode = 'read'): Promise<MeterBalance> {
  const ledger = await read<Record<string, unknown>[]>(db(CREDITS).where({ customer_id: customer.id, meter_id: meter.id }).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('kind', 'units', 'created_at'));
  const { resetAt, credits } = ledgerStanding(ledger);
  return balanceOf(credits, await consumption(db, meter, customer, resetAt?.getTime(), mode));
}

/** From a customer's ledger rows of one meter, in ledger order: the last reset, and the credits since it. */
function ledgerStanding(ledger: readonly Record<string, unknown>[]): { resetAt: Date | undefined; credits: number[] } {
  let resetAt: Date | undefined;
  for (const row of ledger) if (row.kind === 'reset') resetAt = fromDbTime(row.created_at);
  const credits = ledger.filter((row) => row.kind === 'credited' && (!resetAt || fromDbTime(row.created_at) >= resetAt)).map((row) => fromDbInt(row.units));
  return { resetAt, credits };
}

function balanceOf(credits: readonly number[], usage: { quantity: number; events: number }): MeterBalance {
  const creditedUnits = nonNegativeRunningSum(credits);
  return { consumedUnits: usage.quantity, creditedUnits, balance: creditedUnits - usage.quantity, active: usage.events > 0 || credits.length > 0 };
}

/** What refreshing a customer's meters did: whether any changed, and the rows on live meters as now stored. */
export interface RefreshedMeters {
  changed: boolean;
  /**
   * The customer's rows on live meters with their fresh figures, in the order customer state lists them; undefined
   * when another daemon's refresh inserted one of them meanwhile (its id is not known here: read them again).
   */
  meters: CustomerMeter[] | undefined;
}

/** Recomputes and stores one customer's meters (a row appears once the customer has used or been credited on a meter). */
export async function refreshCustomerMeters(trx: Executor, now: Date, customer: Customer, mode: Exclude<UsageMode, 'read'> = 'refresh'): Promise<RefreshedMeters> {
  let changed = false;
  let meters: CustomerMeter[] | undefined = [];
  for (const meter of await activeMeters(trx, customer.organizationId)) {
    const balance = await meterBalance(trx, meter, customer, mode);
    const existing = await trx(TABLE).where({ customer_id: customer.id, meter_id: meter.id }).first();
    const stored = await storeFigures(trx, now, customer, meter, existing, balance);
    changed ||= stored.changed;
    if (stored.row === undefined) meters = undefined;
    else if (stored.row) meters?.push(stored.row);
  }
  // As activeCustomerMeters lists them: by creation (a stable sort keeps the meters' order among rows made together).
  meters?.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  return { changed, meters };
}

/**
 * Stores a customer's figures on a meter, given its row as read (`existing`, if any). Answers whether they changed
 * and the row as now stored: null when there is none to keep (nothing used or credited), undefined when another
 * daemon's refresh inserted it meanwhile (then that one announces).
 */
async function storeFigures(trx: Executor, now: Date, customer: Customer, meter: Meter, existing: Record<string, unknown> | undefined, balance: MeterBalance): Promise<{ changed: boolean; row: CustomerMeter | null | undefined }> {
  const figures = { consumedUnits: balance.consumedUnits, creditedUnits: balance.creditedUnits, balance: balance.balance };
  if (!existing) {
    if (!balance.active) return { changed: false, row: null };
    const id = newId();
    const inserted = await trx(TABLE)
      .insert({
        id,
        organization_id: customer.organizationId,
        customer_id: customer.id,
        meter_id: meter.id,
        consumed_units: balance.consumedUnits,
        credited_units: balance.creditedUnits,
        balance: balance.balance,
        created_at: toDbTime(now),
        modified_at: null,
      })
      .onConflict(['customer_id', 'meter_id'])
      .ignore()
      .returning('id');
    if (!inserted.length) return { changed: false, row: undefined };
    return { changed: true, row: { id, organizationId: customer.organizationId, customerId: customer.id, meterId: meter.id, ...figures, createdAt: now, modifiedAt: null } };
  }
  if (!figuresDiffer(existing, balance)) return { changed: false, row: { ...toCustomerMeter(existing), ...figures } };
  await trx(TABLE)
    .where({ id: existing.id })
    .update({ consumed_units: balance.consumedUnits, credited_units: balance.creditedUnits, balance: balance.balance, modified_at: toDbTime(now) });
  return { changed: true, row: { ...toCustomerMeter(existing), ...figures, modifiedAt: now } };
}

const figuresDiffer = (row: Record<string, unknown>, balance: MeterBalance) => Number(row.consumed_units) !== balance.consumedUnits || Number(row.credited_units) !== balance.creditedUnits;

async function customerOfSubject(db: Executor, organizationId: string, subject: string): Promise<Customer | undefined> {
  const separator = subject.indexOf(':');
  if (separator < 0) return (await findCustomers(db, { id: subject }, [organizationId]))[0];
  return (await findCustomers(db, { externalId: subject.slice(separator + 1) }, [organizationId]))[0];
}

/**
 * Customers refreshed by one run of the refresh job. On SQLite the run's write holds the one writer, so a run stays
 * short; on PostgreSQL a run's statements are as many for 250 customers as for 50 (each read and write takes all of
 * them at once), and a customer whose refresh comes due behind a load's hundred busy customers is taken by the next
 * run instead of the third.
 */
const REFRESH_BATCH = { sqlite: 50, postgres: 250 } as const;

async function refreshSubject(trx: Knex.Transaction, clock: Clock, organizationId: string, subject: string): Promise<void> {
  const customer = await customerOfSubject(trx, organizationId, subject);
  if (!customer) return;
  // Events sent with an external id before its customer was known (or while it was being created) are counted
  // by rebuilding the customer's usage from its events.
  const mode = subject.includes(':') ? 'rebuild' : 'refresh';
  const refreshed = await refreshCustomerMeters(trx, clock.now(), customer, mode);
  // As Polar does, a change of a customer's meters is announced as customer.state_changed (with the figures just
  // computed, instead of reading them all again).
  if (refreshed.changed) await announceCustomerState(trx, clock, customer.organizationId, customer.id, { customer, meters: refreshed.meters });
}

/**
 * The job that stores a customer's meters after an ingest or a credit, and announces the change. A run also takes
 * the organization's other refreshes due now (an ingest batch often touches many customers) instead of one claim
 * each, and refreshes them together (refreshCustomers; docs/performance.md, "Latency under ingest").
 */
export const meteringJobs: JobHandlers = {
  [CUSTOMER_REFRESH_JOB]: async ({ db, clock, claimedAtMs }, job) => {
    // The extra claims share the runner's lease on this job, from the runner's claim. (Not read back from this job's
    // row: under ingest the next batch for the same customer releases that claim at once, and the run then took
    // this one customer alone, a hundred runs where two would do.)
    const more = await claimDueJobsOfKind(db, { kind: CUSTOMER_REFRESH_JOB, organizationId: job.organizationId, dueByMs: clock.now().getTime(), nowMs: claimedAtMs ?? clock.now().getTime(), limit: REFRESH_BATCH[dialectOf(db)] - 1, excludeIds: [job.id] });
    try {
      await refreshCustomers(db, clock, job.organizationId, [job.subjectId, ...more.jobs.map((other) => other.subjectId)]);
    } catch (error) {
      await finishClaimedJobs(db, more.token, 'failed');
      throw error;
    }
    await finishClaimedJobs(db, more.token, 'done');
  },
};

/**
 * Refreshes a run's customers with one write transaction for all of them. Under ingest a transaction waits its turn
 * behind the ingests (on SQLite for the one writer): fifty customers in a transaction each waited fifty turns, 80 % of
 * a run's 2 s, while fifty in one transaction that also read everything held the writer 0.2-1.2 s. So their meters'
 * ledgers, usage rows and stored figures are read first, outside any transaction (on SQLite on the read-only
 * connection, which waits for no writer), and only the customers whose figures changed are written and announced,
 * together. A customer is refreshed alone, as before, in a transaction of its own, when its usage must be rebuilt
 * from its events first (a usage row missing or pending, a reset since it was built, a subject by external id), or
 * when another refresh changed its stored figures after they were read. An ingest committed after the read marks the
 * customer due again (markCustomersDirty), so what it added is stored by the next run.
 */
async function refreshCustomers(db: Database, clock: Clock, organizationId: string, subjects: readonly string[]): Promise<void> {
  const alone = subjects.filter((subject) => subject.includes(':'));
  const ids = subjects.filter((subject) => !subject.includes(':'));
  if (ids.length > 0) {
    const plan = await planRefresh(db, organizationId, ids);
    alone.push(...plan.alone);
    if (plan.changed.length > 0) alone.push(...(await db.transaction((trx) => applyRefresh(trx, clock, plan.changed))));
  }
  for (const subject of alone) await db.transaction((trx) => refreshSubject(trx, clock, organizationId, subject));
}

/** A customer whose figures changed: each live meter's figures and its stored row as read (none yet: undefined). */
interface ChangedCustomer {
  customer: Customer;
  figures: { meter: Meter; existing: Record<string, unknown> | undefined; balance: MeterBalance }[];
}

/** What a run's customers' rows say: the customers whose figures changed, and those to refresh alone (exported for its test). */
export async function planRefresh(db: Database, organizationId: string, ids: readonly string[]): Promise<{ changed: ChangedCustomer[]; alone: string[] }> {
  const customers = await liveCustomersOf(db, organizationId, ids);
  const meters = await activeMeters(db, organizationId);
  if (customers.length === 0 || meters.length === 0) return { changed: [], alone: [] };
  const customerIds = customers.map((customer) => customer.id);
  const meterIds = meters.map((meter) => meter.id);
  const ledger = new Map<string, Record<string, unknown>[]>();
  for (const row of await read<Record<string, unknown>[]>(
    db(CREDITS).whereIn('customer_id', customerIds).whereIn('meter_id', meterIds).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('customer_id', 'meter_id', 'kind', 'units', 'created_at'),
  )) {
    const key = `${row.meter_id}/${row.customer_id}`;
    ledger.set(key, [...(ledger.get(key) ?? []), row]);
  }
  const usage = await usageOfCustomers(db, meterIds, customerIds);
  const stored = new Map((await read<Record<string, unknown>[]>(db(TABLE).whereIn('customer_id', customerIds).whereIn('meter_id', meterIds))).map((row) => [`${row.meter_id}/${row.customer_id}`, row]));
  const changed: ChangedCustomer[] = [];
  const alone: string[] = [];
  next: for (const customer of customers) {
    const figures: ChangedCustomer['figures'] = [];
    for (const meter of meters) {
      const key = `${meter.id}/${customer.id}`;
      const { resetAt, credits } = ledgerStanding(ledger.get(key) ?? []);
      let consumed: { quantity: number; events: number };
      if (isPartialMeter(meter)) {
        const row = usage.get(key);
        if (!isWhole(row, resetAt?.getTime() ?? 0)) {
          alone.push(customer.id);
          continue next;
        }
        consumed = consumedOf(meter, row);
      } else consumed = await customerUsage(db, meter, customer, { ingestedFrom: resetAt?.getTime() });
      figures.push({ meter, existing: stored.get(key), balance: balanceOf(credits, consumed) });
    }
    if (figures.some(({ existing, balance }) => (existing ? figuresDiffer(existing, balance) : balance.active))) changed.push({ customer, figures });
  }
  return { changed, alone };
}

/**
 * Writes and announces the changed customers in the caller's transaction, in id order (and each customer's meters
 * oldest first, as a refresh of one customer takes them: two refreshes lock rows in the same order). A customer whose
 * stored rows are no longer as read (another daemon's refresh ran meanwhile) is left as it is and answered: to be
 * refreshed alone (exported for its test).
 */
export async function applyRefresh(trx: Knex.Transaction, clock: Clock, changed: readonly ChangedCustomer[]): Promise<string[]> {
  const now = clock.now();
  const raced: string[] = [];
  const postgres = dialectOf(trx) === 'postgres';
  const current = new Map((await storedRowsOf(trx, changed.map(({ customer }) => customer.id), postgres)).map((row) => [`${row.meter_id}/${row.customer_id}`, row]));
  const asRead = (a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined) =>
    a && b ? a.id === b.id && Number(a.consumed_units) === Number(b.consumed_units) && Number(a.credited_units) === Number(b.credited_units) : a === b;
  // A customer deleted since the read is left alone: its deletion announced what it has left.
  const organizationId = changed[0]?.customer.organizationId ?? '';
  const live = new Set((await liveCustomersOf(trx, organizationId, changed.map(({ customer }) => customer.id))).map((customer) => customer.id));
  const announced: { customer: Customer; meters: CustomerMeter[] }[] = [];
  const updates: { existing: Record<string, unknown>; balance: MeterBalance }[] = [];
  const asReadNow: ChangedCustomer[] = [];
  for (const entry of changed) {
    const { customer, figures } = entry;
    if (!live.has(customer.id)) continue;
    if (!figures.every(({ meter, existing }) => asRead(current.get(`${meter.id}/${customer.id}`), existing))) raced.push(customer.id);
    else asReadNow.push(entry);
  }
  // PostgreSQL: the rows found are locked as read (storedRowsOf) until this transaction ends; the rows missing (a
  // customer's first figures on a meter) are inserted in one statement for every customer, and a customer one of
  // whose rows another daemon's refresh inserted meanwhile is left to a refresh of its own. Its rows' updates,
  // guarded all the same, go in one statement with every such customer's (updateFiguresPg). Before, a customer with
  // a row to insert was written in a savepoint of its own, five round trips to a busy daemon: the first run of a
  // hundred new customers took 10 s under the latency bench's ingest load.
  const inserted = postgres ? await insertFiguresPg(trx, now, asReadNow) : undefined;
  for (const { customer, figures } of asReadNow) {
    let meters: CustomerMeter[] | undefined;
    if (inserted) {
      if (figures.some(({ meter, existing, balance }) => !existing && balance.active && !inserted.has(`${meter.id}/${customer.id}`))) {
        raced.push(customer.id);
        continue;
      }
      meters = [];
      for (const { meter, existing, balance } of figures) {
        const figuresNow = { consumedUnits: balance.consumedUnits, creditedUnits: balance.creditedUnits, balance: balance.balance };
        if (!existing) {
          const id = inserted.get(`${meter.id}/${customer.id}`);
          if (id) meters.push({ id, organizationId: customer.organizationId, customerId: customer.id, meterId: meter.id, ...figuresNow, createdAt: now, modifiedAt: null });
        } else if (figuresDiffer(existing, balance)) {
          updates.push({ existing, balance });
          meters.push({ ...toCustomerMeter(existing), ...figuresNow, modifiedAt: now });
        } else meters.push({ ...toCustomerMeter(existing), ...figuresNow });
      }
    } else {
      // SQLite: this transaction holds the one writer, nothing changes after the check.
      meters = await storeChangedFigures(trx, now, customer, figures);
    }
    // As activeCustomerMeters lists them: by creation (a stable sort keeps the meters' order among rows made together).
    meters.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    announced.push({ customer, meters });
  }
  await updateFiguresPg(trx, now, updates);
  await announceCustomerStates(trx, clock, organizationId, announced);
  return raced;
}

/**
 * The run's customers' stored rows, as they are now. On PostgreSQL they stay locked until the run's transaction ends
 * (FOR UPDATE, in the order a refresh of one customer updates them: by customer, then its meters oldest first), so
 * that rows found as read are still so when written: no other refresh can change them meanwhile, and the run's
 * updates need no savepoint a customer (three round trips each, two more for its updates).
 */
async function storedRowsOf(trx: Knex.Transaction, customerIds: readonly string[], postgres: boolean): Promise<Record<string, unknown>[]> {
  const query = trx(`${TABLE} as cm`).whereIn('cm.customer_id', customerIds).select('cm.id', 'cm.customer_id', 'cm.meter_id', 'cm.consumed_units', 'cm.credited_units');
  if (postgres) {
    query
      .join('meters as m', 'm.id', 'cm.meter_id')
      .orderBy([{ column: 'cm.customer_id' }, { column: 'm.created_at' }, { column: 'm.id' }])
      .forUpdate('cm');
  }
  return query;
}

/** PostgreSQL: the run's updates of rows it holds locked, in one statement, each guarded by the figures read. */
async function updateFiguresPg(trx: Knex.Transaction, now: Date, updates: readonly { existing: Record<string, unknown>; balance: MeterBalance }[]): Promise<void> {
  if (updates.length === 0) return;
  const result = await trx.raw(
    `update ${TABLE} as cm set consumed_units = v.consumed, credited_units = v.credited, balance = v.balance, modified_at = ?::timestamptz ` +
      'from unnest(?::text[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[]) as v(id, read_consumed, read_credited, consumed, credited, balance) ' +
      'where cm.id = v.id and cm.consumed_units = v.read_consumed and cm.credited_units = v.read_credited',
    [
      toDbTime(now),
      updates.map(({ existing }) => String(existing.id)),
      updates.map(({ existing }) => Number(existing.consumed_units)),
      updates.map(({ existing }) => Number(existing.credited_units)),
      updates.map(({ balance }) => balance.consumedUnits),
      updates.map(({ balance }) => balance.creditedUnits),
      updates.map(({ balance }) => balance.balance),
    ] as unknown as Knex.RawBinding[],
  );
  // The rows were locked as read: a miss is a bug, and the run's transaction is rolled back rather than announce it.
  if (result.rowCount !== updates.length) throw new Error(`A refresh run updated ${result.rowCount} of ${updates.length} locked customer meter rows`);
}

/**
 * PostgreSQL: inserts the customers' missing rows of the meters they are active on, in one statement (id order, each
 * customer's meters as given), skipping rows another daemon's refresh inserted meanwhile. Answers the ids of the
 * rows inserted, by `meter id/customer id`.
 */
async function insertFiguresPg(trx: Knex.Transaction, now: Date, customers: readonly ChangedCustomer[]): Promise<Map<string, string>> {
  const rows = customers.flatMap(({ customer, figures }) => figures.filter(({ existing, balance }) => !existing && balance.active).map(({ meter, balance }) => ({ id: newId(), customer, meter, balance })));
  if (rows.length === 0) return new Map();
  const result = await trx.raw(
    `insert into ${TABLE} (id, organization_id, customer_id, meter_id, consumed_units, credited_units, balance, created_at, modified_at) ` +
      'select v.id, v.organization_id, v.customer_id, v.meter_id, v.consumed, v.credited, v.balance, ?::timestamptz, null ' +
      'from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::float8[], ?::float8[], ?::float8[]) as v(id, organization_id, customer_id, meter_id, consumed, credited, balance) ' +
      'on conflict (customer_id, meter_id) do nothing returning id, customer_id, meter_id',
    [
      toDbTime(now),
      rows.map((row) => row.id),
      rows.map((row) => row.customer.organizationId),
      rows.map((row) => row.customer.id),
      rows.map((row) => row.meter.id),
      rows.map((row) => row.balance.consumedUnits),
      rows.map((row) => row.balance.creditedUnits),
      rows.map((row) => row.balance.balance),
    ] as unknown as Knex.RawBinding[],
  );
  return new Map((result.rows as Record<string, unknown>[]).map((row) => [`${row.meter_id}/${row.customer_id}`, String(row.id)]));
}

/**
 * SQLite: stores a customer's figures whose rows are as read, each update guarded by them. The run's transaction holds
 * the one writer, so a row not as read is a bug: it throws, and the job runs again.
 */
async function storeChangedFigures(trx: Knex.Transaction, now: Date, customer: Customer, figures: ChangedCustomer['figures']): Promise<CustomerMeter[]> {
  const rows: CustomerMeter[] = [];
  for (const { meter, existing, balance } of figures) {
    if (existing && figuresDiffer(existing, balance)) {
      const updated = await trx(TABLE)
        .where({ id: existing.id, consumed_units: existing.consumed_units, credited_units: existing.credited_units })
        .update({ consumed_units: balance.consumedUnits, credited_units: balance.creditedUnits, balance: balance.balance, modified_at: toDbTime(now) });
      if (updated !== 1) throw notAsRead(customer);
      rows.push({ ...toCustomerMeter(existing), consumedUnits: balance.consumedUnits, creditedUnits: balance.creditedUnits, balance: balance.balance, modifiedAt: now });
      continue;
    }
    const stored = await storeFigures(trx, now, customer, meter, existing, balance);
    if (stored.row === undefined) throw notAsRead(customer);
    if (stored.row) rows.push(stored.row);
  }
  return rows;
}

const notAsRead = (customer: Customer) => new Error(`Customer ${customer.id}'s meter rows changed after a refresh read them, under SQLite's one writer`);

/**
 * Called in the transaction that records a meter credit or reset (the benefit-grants ledger): writes the
 * `meter.credited` / `meter.reset` system event Polar shows in the customer's events, and has the customer's
 * meters recomputed.
 */
export async function meterCreditRecorded(
  trx: Executor,
  entry: { organizationId: string; customerId: string; meterId: string; kind: 'credited' | 'reset'; units: number; rollover: boolean; at: Date },
): Promise<void> {
  const customer = (await findCustomers(trx, { id: entry.customerId }, [entry.organizationId]))[0];
  await insertSystemEvent(trx, {
    organizationId: entry.organizationId,
    customerId: entry.customerId,
    externalCustomerId: customer?.externalId ?? null,
    name: entry.kind === 'reset' ? METER_RESET : METER_CREDITED,
    metadata: entry.kind === 'reset' ? { meter_id: entry.meterId } : { meter_id: entry.meterId, units: entry.units, rollover: entry.rollover },
    at: entry.at,
  });
  await markCustomersDirty(trx, entry.organizationId, [entry.customerId], entry.at);
}

export interface CustomerMeterView {
  customerMeter: CustomerMeter;
  customer: Customer;
  meter: Meter;
}

const SORT_COLUMNS: Record<string, string> = {
  created_at: 'cm.created_at',
  modified_at: 'cm.modified_at',
  customer_id: 'cm.customer_id',
  customer_name: 'c.name',
  meter_id: 'cm.meter_id',
  meter_name: 'm.name',
  consumed_units: 'cm.consumed_units',
  credited_units: 'cm.credited_units',
  balance: 'cm.balance',
};

export interface CustomerMeterFilter {
  organizationIds: readonly string[];
  customerIds?: readonly string[];
  externalCustomerIds?: readonly string[];
  meterIds?: readonly string[];
}

/** Fresh figures for stored rows: a read recomputes what the background refresh may not have caught up with yet. */
async function views(db: Executor, rows: CustomerMeter[]): Promise<CustomerMeterView[]> {
  const meters = new Map((await findMetersByIds(db, rows.map((row) => row.meterId))).map((meter) => [meter.id, meter]));
  const result: CustomerMeterView[] = [];
  for (const row of rows) {
    const customer = (await findCustomers(db, { id: row.customerId }, [row.organizationId]))[0];
    const meter = meters.get(row.meterId);
    if (!customer || !meter) continue;
    const balance = await meterBalance(db, meter, customer);
    result.push({ customerMeter: { ...row, consumedUnits: balance.consumedUnits, creditedUnits: balance.creditedUnits, balance: balance.balance }, customer, meter });
  }
  return result;
}

export async function listCustomerMeters(db: Database, filter: CustomerMeterFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<CustomerMeterView>> {
  const scoped = () => {
    const query = db(`${TABLE} as cm`)
      .join('customers as c', 'c.id', 'cm.customer_id')
      .join('meters as m', 'm.id', 'cm.meter_id')
      .whereIn('cm.organization_id', filter.organizationIds)
      .whereNull('c.deleted_at');
    if (filter.customerIds) query.whereIn('cm.customer_id', filter.customerIds);
    if (filter.externalCustomerIds) query.whereIn('c.external_id', filter.externalCustomerIds);
    // Archived meters are left out unless asked for by id (Polar).
    if (filter.meterIds) query.whereIn('cm.meter_id', filter.meterIds);
    else query.whereNull('m.archived_at');
    return query;
  };
  const [{ count }] = await read<{ count: number | string }[]>(scoped().count({ count: '*' }));
  const query = scoped().select('cm.*');
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = (await read<Record<string, unknown>[]>(query.orderBy('cm.id').limit(page.limit).offset(offsetOf(page)) as Knex.QueryBuilder)).map(toCustomerMeter);
  return { items: await views(db, rows), totalCount: Number(count) };
}

export async function getCustomerMeter(db: Database, readable: ReadonlySet<string>, id: string): Promise<CustomerMeterView> {
  const row = await db(TABLE).where({ id }).whereIn('organization_id', [...readable]).first();
  const [view] = row ? await views(db, [toCustomerMeter(row)]) : [];
  if (!view) throw new CoreError('not_found', 'CUSTOMER_METER_NOT_FOUND', 'Customer meter not found');
  return view;
}

// Compiled once: every customer state read runs it (docs/performance.md, "Reads").
const liveMeterRows = compiledRead<Record<string, unknown>[], [string]>((db, customerId) =>
  db(`${TABLE} as cm`).join('meters as m', 'm.id', 'cm.meter_id').where('cm.customer_id', customerId).whereNull('m.archived_at').select('cm.*').orderBy('cm.created_at'),
);

/** A customer's meters on live meters, fresh: what customer state lists as active_meters. */
export async function activeCustomerMeters(db: Executor, customerId: string): Promise<CustomerMeter[]> {
  const rows = (await liveMeterRows(db, customerId)).map(toCustomerMeter);
  return (await views(db, rows)).map((view) => view.customerMeter);
}

/**
 * Called in the transaction that gives a customer an external id (created with one, or set later): events sent
 * with that external id now count for the customer, so its usage is rebuilt from the events.
 */
export async function customerExternalIdSet(trx: Executor, clock: Clock, organizationId: string, customerId: string): Promise<void> {
  await invalidateUsage(trx, { customerId });
  await markCustomersDirty(trx, organizationId, [customerId], clock.now());
}

/** Called in the transaction that changes a meter's filter or aggregation: every customer's usage of it is rebuilt. */
export async function meterDefinitionChanged(trx: Executor, clock: Clock, meter: Meter): Promise<void> {
  const customers = await invalidateUsage(trx, { meterId: meter.id });
  await markCustomersDirty(trx, meter.organizationId, customers, clock.now());
}
