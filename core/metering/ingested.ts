import type { Knex } from 'knex';
import { dialectOf, type Executor } from '../db/database.js';
import { wakeJobRunnerOnCommit } from '../jobs/jobs.js';
import { dirtyCustomersUpsertPg, markCustomersDirty } from './events-repository.js';
import { EMPTY_PARTIAL, mergePartials, isPartialMeter, partialsOfEvents, type GroupedPartial, type Partial, type Statement } from './partials.js';
import { addUsage, usageUpsertPg } from './usage.js';
import { addRollups, readyMeters, rollupRows, rollupsUpsertPg, unknownCustomerKey } from './rollups.js';
import type { Meter, StoredEvent } from './schema.js';
import { organizationMeters } from './meters-repository.js';

/**
 * What an ingest on PostgreSQL worked out before recordIngested: the organization's meters ingestion keeps
 * (isPartialMeter), which of them have whole rollups, read after the metering lock (organizationMetersWithReadiness:
 * it sees the state a backfill run left), and the partials of the events it inserted (insertEventsWithPartials).
 */
export interface PreparedPartials {
  meters: readonly Meter[];
  ready: ReadonlySet<string>;
  partials: Map<string, GroupedPartial[]>;
}

/** Who an ingested batch touched: customers by id, and external ids no customer has (yet). */
export interface Touched {
  customerIds: string[];
  unknownExternalIds: string[];
}

/**
 * In the ingest's transaction, after its events are inserted: adds the batch's partials to each meter's figures
 * (every meter of the organization but unique ones, archived ones too so that unarchiving finds them whole), by
 * customer, and marks the customers it touched for a refresh due at `dirtyAt` (markCustomersDirty). An event sent
 * with an external id counts for the customer holding that external id now; an event of no known customer is left
 * to the customer's creation (which rebuilds its figures from the events). The usage rows of customers whose first
 * user events these are (`firstEvents`, from noteFirstUserEvents) hold all of their events: they are whole at once
 * instead of pending, and the customer's first refresh need not rebuild them from the events, which waited on the
 * rows' locks behind every ingest of the customer.
 */
export async function recordIngested(
  trx: Executor,
  organizationId: string,
  events: readonly StoredEvent[],
  dirtyAt: Date,
  firstEvents: ReadonlySet<string> = new Set(),
  customers?: readonly { id: string; external_id: string | null }[],
  prepared?: PreparedPartials,
): Promise<Touched> {
  const externals = [...new Set(events.flatMap((event) => (event.customerId === null && event.externalCustomerId !== null ? [event.externalCustomerId] : [])))];
  const byExternal = new Map<string, string>();
  if (externals.length) {
    // The batch's customers as the ingest read them (every live one holding one of these external ids among them).
    const holders: readonly { id: unknown; external_id: unknown }[] = customers ?? (await trx('customers').where({ organization_id: organizationId }).whereIn('external_id', externals).whereNull('deleted_at').select('id', 'external_id'));
    const wanted = new Set(externals);
    for (const row of holders) {
      if (row.external_id !== null && wanted.has(String(row.external_id))) byExternal.set(String(row.external_id), String(row.id));
    }
  }
  const customerOf = (customerId: string | null, externalId: string | null) => customerId ?? (externalId === null ? undefined : byExternal.get(externalId));
  const touched = new Set<string>();
  for (const event of events) {
    const customer = customerOf(event.customerId, event.externalCustomerId);
    if (customer) touched.add(customer);
  }
  const unknownExternalIds = externals.filter((external) => !byExternal.has(external));
  if (events.length === 0) return { customerIds: [], unknownExternalIds };

  const pg = dialectOf(trx) === 'postgres';
  const meters: readonly Meter[] = prepared?.meters ?? (await organizationMeters(trx, organizationId)).filter(isPartialMeter);
  const ready = prepared?.ready ?? (await readyMeters(trx, meters.map((meter) => meter.id)));
  const partials = prepared?.partials ?? (await partialsOfEvents(trx, meters, events.map((event) => event.id)));
  const usage = new Map<string, Map<string, Partial>>();
  const rollups = new Map<string, ReturnType<typeof rollupRows>>();
  for (const meter of meters) {
    const groups = partials.get(meter.id)!;
    const mine = new Map<string, Partial>();
    for (const group of groups) {
      const customer = customerOf(group.customerId, group.externalCustomerId);
      if (!customer) continue;
      const current = mine.get(customer);
      mine.set(customer, current ? mergePartials(current, group) : group);
    }
    // A customer's first events give it a whole row of every meter, empty where none of them counts: a row made
    // later (pending: events before it may count) would have its first refresh rebuild it from the customer's events,
    // alone and one customer after another, which held every other refresh back (5-7 s under the latency bench, for
    // the customers whose events no meter counted).
    for (const customer of firstEvents) if (!mine.has(customer)) mine.set(customer, EMPTY_PARTIAL);
    usage.set(meter.id, mine);
    // A meter still being backfilled takes these events in with the rest (they come after its cursor).
    if (ready.has(meter.id)) rollups.set(meter.id, rollupRows(groups, (g) => customerOf(g.customerId, g.externalCustomerId) ?? unknownCustomerKey(g.externalCustomerId!)));
  }
  const result = { customerIds: [...touched], unknownExternalIds };
  // The customers' usage is up to date with this commit (reads answer it at once); a job due now stores their
  // meters and announces customer.state_changed (ingests arriving while it is pending share it).
  const subjects = [...result.customerIds, ...unknownExternalIds.map((external) => `${organizationId}:${external}`)];
  if (pg) {
    await writeAsOneStatement(trx, [
      (where) => usageUpsertPg(organizationId, usage, firstEvents, where),
      (where) => rollupsUpsertPg(rollups, where),
      (where) => dirtyCustomersUpsertPg(organizationId, subjects, dirtyAt, where),
    ]);
    if (subjects.length) wakeJobRunnerOnCommit(trx, dirtyAt.getTime());
    return result;
  }
  await addUsage(trx, organizationId, usage, firstEvents);
  await addRollups(trx, rollups);
  await markCustomersDirty(trx, organizationId, subjects, dirtyAt);
  return result;
}

/**
 * PostgreSQL: the batch's writes to rows other ingests also write (usage rows, rollups, refresh jobs) as one
 * statement, the last before COMMIT. Each such row stays locked from its write to the commit, and concurrent ingests
 * of the same customers queue on those locks: as three statements, the locks were held across three round trips to
 * a busy daemon. The steps run in the order given (each waits for the previous one's rows: its SELECT reads the
 * count of them), so rows are still locked usage first, then rollups, then jobs, each in its sorted order.
 */
async function writeAsOneStatement(trx: Executor, steps: ((where: string) => Statement | undefined)[]): Promise<void> {
  const parts: string[] = [];
  const bindings: Knex.RawBinding[] = [];
  for (const step of steps) {
    const previous = parts.length ? `w${parts.length - 1}` : undefined;
    const statement = step(previous ? `where (select count(*) from ${previous}) >= 0` : '');
    if (!statement) continue;
    parts.push(`w${parts.length} as (${statement.sql} returning 1)`);
    bindings.push(...statement.bindings);
  }
  if (parts.length === 0) return;
  await trx.raw(`with ${parts.join(', ')} select count(*) from w${parts.length - 1}`, bindings);
}
