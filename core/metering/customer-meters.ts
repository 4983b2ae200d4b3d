import type { Knex } from 'knex';
import type { Clock } from '../clock.js';
import { fromDbInt, fromDbTime, fromDbTimeOrNull, newId, toDbTime } from '../db/columns.js';
import type { Database, Executor } from '../db/database.js';
import { CoreError } from '../errors.js';
import { findCustomers } from '../billing/customers/repository.js';
import { announceCustomerState } from '../billing/customer-state/service.js';
import type { Customer } from '../billing/customers/schema.js';
import { offsetOf, type Page, type PageQuery } from '../billing/shared/pagination.js';
import type { SortCriterion } from '../billing/shared/query.js';
import { claimDueJobsOfKind, finishClaimedJobs, type JobHandlers } from '../jobs/jobs.js';
import { CUSTOMER_REFRESH_JOB, insertSystemEvent, markCustomersDirty } from './events-repository.js';
import { activeMeters, findMetersByIds } from './meters-repository.js';
import { isPartialMeter, quantityOf } from './partials.js';
import { customerUsage } from './quantities.js';
import { findUsage, invalidateUsage, rebuildUsage } from './usage.js';
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
  if (!usage || usage.pending || usage.sinceMs !== since) {
    if (mode === 'read') return customerUsage(db, meter, customer, { ingestedFrom: resetAt });
    usage = await rebuildUsage(db, meter, customer, since);
  }
  return { quantity: quantityOf(meter.aggregation, usage.partial), events: usage.partial.events };
}

/**
 * A customer's standing on a meter now: consumption since the last reset (from its usage row, which every ingest
 * keeps up to date, see core/metering/usage.ts), credits since then (a non-negative running sum, in ledger order),
 * and the balance credited − consumed.
 */
export async function meterBalance(db: Executor, meter: Meter, customer: { id: string; externalId: string | null }, mode: UsageMode = 'read'): Promise<MeterBalance> {
  const ledger = await read<Record<string, unknown>[]>(db(CREDITS).where({ customer_id: customer.id, meter_id: meter.id }).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('kind', 'units', 'created_at'));
  let resetAt: Date | undefined;
  for (const row of ledger) if (row.kind === 'reset') resetAt = fromDbTime(row.created_at);
  const credits = ledger.filter((row) => row.kind === 'credited' && (!resetAt || fromDbTime(row.created_at) >= resetAt)).map((row) => fromDbInt(row.units));
  const usage = await consumption(db, meter, customer, resetAt?.getTime(), mode);
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
    const figures = { consumedUnits: balance.consumedUnits, creditedUnits: balance.creditedUnits, balance: balance.balance };
    const existing = await trx(TABLE).where({ customer_id: customer.id, meter_id: meter.id }).first();
    if (!existing) {
      if (!balance.active) continue;
      const id = newId();
      // Another daemon's refresh of the same customer may insert it first: then that one announces.
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
      if (inserted.length) {
        changed = true;
        meters?.push({ id, organizationId: customer.organizationId, customerId: customer.id, meterId: meter.id, ...figures, createdAt: now, modifiedAt: null });
      } else meters = undefined;
    } else if (Number(existing.consumed_units) !== balance.consumedUnits || Number(existing.credited_units) !== balance.creditedUnits) {
      await trx(TABLE)
        .where({ id: existing.id })
        .update({ consumed_units: balance.consumedUnits, credited_units: balance.creditedUnits, balance: balance.balance, modified_at: toDbTime(now) });
      changed = true;
      meters?.push({ ...toCustomerMeter(existing), ...figures, modifiedAt: now });
    } else meters?.push({ ...toCustomerMeter(existing), ...figures });
  }
  // As activeCustomerMeters lists them: by creation (a stable sort keeps the meters' order among rows made together).
  meters?.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  return { changed, meters };
}

async function customerOfSubject(db: Executor, organizationId: string, subject: string): Promise<Customer | undefined> {
  const separator = subject.indexOf(':');
  if (separator < 0) return (await findCustomers(db, { id: subject }, [organizationId]))[0];
  return (await findCustomers(db, { externalId: subject.slice(separator + 1) }, [organizationId]))[0];
}

/** Customers refreshed by one run of the refresh job. */
const REFRESH_BATCH = 50;

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
 * each (docs/performance.md, "Latency under ingest"). Each customer is refreshed in a transaction of its own. On
 * SQLite, fifty in one held the one connection 200 ms to over a second under ingest, and ten in one still left
 * customer.state_changed later than one each did, every ingest and webhook delivery record waiting behind them. On
 * PostgreSQL a refresh locks a customer's usage rows meter by meter, an ingest every customer's of one meter before
 * the next meter's, and two customers' in one transaction would deadlock with it.
 */
export const meteringJobs: JobHandlers = {
  [CUSTOMER_REFRESH_JOB]: async ({ db, clock, claimedAtMs }, job) => {
    // The extra claims share the runner's lease on this job, from the runner's claim. (Not read back from this job's
    // row: under ingest the next batch for the same customer releases that claim at once, and the run then took
    // this one customer alone, a hundred runs where two would do.)
    const more = await claimDueJobsOfKind(db, { kind: CUSTOMER_REFRESH_JOB, organizationId: job.organizationId, dueByMs: clock.now().getTime(), nowMs: claimedAtMs ?? clock.now().getTime(), limit: REFRESH_BATCH - 1, excludeIds: [job.id] });
    const subjects = [job.subjectId, ...more.jobs.map((other) => other.subjectId)];
    try {
      for (const subject of subjects) await db.transaction((trx) => refreshSubject(trx, clock, job.organizationId, subject));
    } catch (error) {
      await finishClaimedJobs(db, more.token, 'failed');
      throw error;
    }
    await finishClaimedJobs(db, more.token, 'done');
  },
};

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
