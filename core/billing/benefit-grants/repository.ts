import type { Knex } from 'knex';
import { fromDbJson, fromDbTime, fromDbTimeOrNull, newId, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { dialectOf } from '../../db/database.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { BenefitGrant } from './schema.js';
import { compiledRead } from '../../db/compiled-read.js';
import { read } from '../../db/read.js';

type Executor = Knex | Knex.Transaction;
const TABLE = 'benefit_grants';

/** A grant from its row (also from a JSON row: another repository reading it with its own). */
export function toGrant(row: Record<string, unknown>): BenefitGrant {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    benefitId: String(row.benefit_id),
    subscriptionId: (row.subscription_id as string | null) ?? null,
    orderId: (row.order_id as string | null) ?? null,
    scope: String(row.scope),
    grantedAt: fromDbTimeOrNull(row.granted_at),
    revokedAt: fromDbTimeOrNull(row.revoked_at),
    properties: fromDbJson(row.properties),
    previousProperties: row.previous_properties === null ? null : fromDbJson(row.previous_properties),
    error: row.error === null ? null : fromDbJson(row.error),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

const stateColumns = (grant: BenefitGrant) => ({
  granted_at: toDbTimeOrNull(grant.grantedAt),
  revoked_at: toDbTimeOrNull(grant.revokedAt),
  properties: toDbJson(grant.properties),
  previous_properties: grant.previousProperties === null ? null : toDbJson(grant.previousProperties),
  error: grant.error === null ? null : toDbJson(grant.error),
  modified_at: toDbTimeOrNull(grant.modifiedAt),
});

/**
 * The grant of (benefit, customer, scope), inserting `fresh` first when there is none. The unique index makes
 * concurrent fulfilments of the same order meet on one row; the row is locked on PostgreSQL until the
 * transaction ends, so its state changes apply one at a time. `created` tells whether `fresh` was the one stored.
 */
export async function claimGrant(trx: Executor, fresh: BenefitGrant): Promise<{ grant: BenefitGrant; created: boolean }> {
  const inserted = await trx(TABLE)
    .insert({
      id: fresh.id,
      organization_id: fresh.organizationId,
      customer_id: fresh.customerId,
      benefit_id: fresh.benefitId,
      subscription_id: fresh.subscriptionId,
      order_id: fresh.orderId,
      scope: fresh.scope,
      created_at: toDbTime(fresh.createdAt),
      ...stateColumns(fresh),
    })
    .onConflict(['benefit_id', 'customer_id', 'scope'])
    .ignore()
    .returning('id');
  const query = trx(TABLE).where({ benefit_id: fresh.benefitId, customer_id: fresh.customerId, scope: fresh.scope });
  if (dialectOf(trx as Knex) === 'postgres') query.forUpdate();
  const row = await query.first();
  return { grant: toGrant(row), created: inserted.length > 0 && String(row.id) === fresh.id };
}

/**
 * Writes a grant's new state if it is still in the state it was read in (`expected`): false when a concurrent
 * change got there first, so a revocation and a grant cannot both win.
 */
export async function saveGrantState(trx: Executor, grant: BenefitGrant, expected: { grantedAt: Date | null; revokedAt: Date | null }): Promise<boolean> {
  const query = trx(TABLE).where({ id: grant.id });
  for (const [column, value] of [['granted_at', expected.grantedAt], ['revoked_at', expected.revokedAt]] as const) {
    if (value === null) query.whereNull(column);
    else query.where(column, toDbTime(value));
  }
  return (await query.update(stateColumns(grant))) === 1;
}

/** The grants of a customer for one benefit, whatever their scope (a license key's grant is found among them). */
export async function grantsOfCustomerBenefit(trx: Executor, customerId: string, benefitId: string): Promise<BenefitGrant[]> {
  return (await trx(TABLE).where({ customer_id: customerId, benefit_id: benefitId }).orderBy([{ column: 'created_at' }, { column: 'id' }])).map(toGrant);
}

/** Writes a grant's properties alone (what a benefit shows of itself: a license key's display key after a rotation). */
export async function saveGrantProperties(trx: Executor, id: string, properties: BenefitGrant['properties'], at: Date): Promise<void> {
  await trx(TABLE).where({ id }).update({ properties: toDbJson(properties), modified_at: toDbTime(at) });
}

/** A customer's grants from one subscription or order (locked on PostgreSQL for the revocation or cycle that reads them). */
export async function grantsOfScope(trx: Executor, customerId: string, scope: string): Promise<BenefitGrant[]> {
  const query = trx(TABLE).where({ customer_id: customerId, scope }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  if (dialectOf(trx as Knex) === 'postgres') query.forUpdate();
  return (await query).map(toGrant);
}

/** Every grant of a customer that is not revoked, locked on PostgreSQL (the customer is being deleted). */
export async function grantsOfCustomer(trx: Executor, customerId: string): Promise<BenefitGrant[]> {
  const query = trx(TABLE).where({ customer_id: customerId }).whereNull('revoked_at').orderBy([{ column: 'created_at' }, { column: 'id' }]);
  if (dialectOf(trx as Knex) === 'postgres') query.forUpdate();
  return (await query).map(toGrant);
}

/** Every grant of a benefit that is not revoked, locked on PostgreSQL (the benefit is being deleted). */
export async function grantsOfBenefit(trx: Executor, benefitId: string): Promise<BenefitGrant[]> {
  const query = trx(TABLE).where({ benefit_id: benefitId }).whereNull('revoked_at').orderBy([{ column: 'created_at' }, { column: 'id' }]);
  if (dialectOf(trx as Knex) === 'postgres') query.forUpdate();
  return (await query).map(toGrant);
}

/** A customer's grants that are in effect (granted, not revoked), oldest first. */
export async function activeGrantsOf(db: Executor, customerId: string): Promise<BenefitGrant[]> {
  return (await grantsInEffect(db, customerId)).map(toGrant);
}

/** Several customers' grants in effect, each customer's oldest first (customer states read together). */
export async function activeGrantsOfCustomers(db: Executor, customerIds: readonly string[]): Promise<Map<string, BenefitGrant[]>> {
  const byCustomer = new Map<string, BenefitGrant[]>(customerIds.map((id) => [id, []]));
  if (customerIds.length === 0) return byCustomer;
  const rows = await read<Record<string, unknown>[]>(db(TABLE).whereIn('customer_id', [...new Set(customerIds)]).whereNotNull('granted_at').whereNull('revoked_at').orderBy([{ column: 'granted_at' }, { column: 'id' }]));
  for (const row of rows) byCustomer.get(String(row.customer_id))?.push(toGrant(row));
  return byCustomer;
}

const grantsInEffect = compiledRead<Record<string, unknown>[], [string]>((db, customerId) =>
  db(TABLE).where({ customer_id: customerId }).whereNotNull('granted_at').whereNull('revoked_at').orderBy([{ column: 'granted_at' }, { column: 'id' }]),
);

/** A grant by id in any organization (a signed download link names it: the signature is the authorization). */
export async function findGrantById(db: Executor, id: string): Promise<BenefitGrant | undefined> {
  const row = await db(TABLE).where({ id }).first();
  return row ? toGrant(row) : undefined;
}

/** A grant by id, locked on PostgreSQL until the transaction ends (its job saves what the service answered). */
export async function lockGrantById(trx: Executor, id: string): Promise<BenefitGrant | undefined> {
  const query = trx(TABLE).where({ id });
  if (dialectOf(trx as Knex) === 'postgres') query.forUpdate();
  const row = await query.first();
  return row ? toGrant(row) : undefined;
}

export async function findGrant(db: Executor, id: string, organizationIds: Iterable<string>): Promise<BenefitGrant | undefined> {
  const row = await db(TABLE).where({ id }).whereIn('organization_id', [...organizationIds]).first();
  return row ? toGrant(row) : undefined;
}

export interface GrantFilter {
  organizationIds: readonly string[];
  benefitIds?: readonly string[];
  customerIds?: readonly string[];
  /** Customers' external ids (joined through customers). */
  externalCustomerIds?: readonly string[];
  isGranted?: boolean;
  /** Benefits' types (joined through benefits). */
  benefitTypes?: readonly string[];
  orderIds?: readonly string[];
  subscriptionIds?: readonly string[];
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', granted_at: 'granted_at', revoked_at: 'revoked_at' };

export async function listGrants(db: Executor, filter: GrantFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<BenefitGrant>> {
  const scoped = () => {
    // Grants of live customers and benefits: a deleted one's grants are no longer shown.
    const query = db(TABLE)
      .whereIn(`${TABLE}.organization_id`, filter.organizationIds)
      .whereIn(`${TABLE}.customer_id`, (sub) => sub.select('id').from('customers').whereNull('deleted_at'))
      .whereIn(`${TABLE}.benefit_id`, (sub) => sub.select('id').from('benefits').whereNull('deleted_at'));
    if (filter.benefitIds) query.whereIn(`${TABLE}.benefit_id`, filter.benefitIds);
    if (filter.customerIds) query.whereIn(`${TABLE}.customer_id`, filter.customerIds);
    if (filter.orderIds) query.whereIn(`${TABLE}.order_id`, filter.orderIds);
    if (filter.subscriptionIds) query.whereIn(`${TABLE}.subscription_id`, filter.subscriptionIds);
    if (filter.benefitTypes) {
      const types = filter.benefitTypes;
      query.whereIn(`${TABLE}.benefit_id`, (sub) => sub.select('id').from('benefits').whereIn('type', types));
    }
    if (filter.externalCustomerIds) {
      const ids = filter.externalCustomerIds;
      query.whereIn(`${TABLE}.customer_id`, (sub) => sub.select('id').from('customers').whereIn('external_id', ids));
    }
    // Polar: is_granted=true lists the grants in effect, false the revoked ones.
    if (filter.isGranted === true) query.whereNotNull(`${TABLE}.granted_at`).whereNull(`${TABLE}.revoked_at`);
    if (filter.isGranted === false) query.whereNotNull(`${TABLE}.revoked_at`);
    return query;
  };
  const [{ count }] = await scoped().count({ count: '*' });
  const query = scoped().select(`${TABLE}.*`);
  for (const { column, order } of sorting) {
    const name = SORT_COLUMNS[column];
    if (name) query.orderByRaw(`${TABLE}.${name} ${order === 'desc' ? 'desc' : 'asc'} nulls ${order === 'desc' ? 'last' : 'first'}`);
    // Polar's portal sorts grants by their benefit's type too.
    if (column === 'type') query.orderByRaw(`(select type from benefits where benefits.id = ${TABLE}.benefit_id) ${order === 'desc' ? 'desc' : 'asc'}`);
    // Polar's portal default puts grants in the order of the benefits on the product they were bought with.
    if (column === 'product_benefit') {
      const product = `coalesce((select product_id from subscriptions where subscriptions.id = ${TABLE}.subscription_id), (select product_id from orders where orders.id = ${TABLE}.order_id))`;
      query.orderByRaw(`(select position from product_benefits where product_benefits.benefit_id = ${TABLE}.benefit_id and product_benefits.product_id = ${product}) ${order === 'desc' ? 'desc nulls first' : 'asc nulls last'}`);
    }
  }
  const rows = await query.orderBy(`${TABLE}.id`).limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toGrant), totalCount: Number(count) };
}

/** One line of the meter-credit ledger (table `meter_credits`, read by metering). */
export async function recordMeterCredit(
  trx: Executor,
  entry: { organizationId: string; customerId: string; meterId: string; grantId: string; kind: 'credited' | 'reset'; units: number; rollover: boolean; at: Date },
): Promise<void> {
  await trx('meter_credits').insert({
    id: newId(),
    organization_id: entry.organizationId,
    customer_id: entry.customerId,
    meter_id: entry.meterId,
    benefit_grant_id: entry.grantId,
    kind: entry.kind,
    units: entry.units,
    rollover: entry.rollover,
    created_at: toDbTime(entry.at),
  });
}

/** Who holds a product (POST /v1/products/{id}/benefits changed its benefits): its subscriptions and one-time orders. */
export interface ProductHolders {
  subscriptions: { id: string; customerId: string; status: string }[];
  /** Paid one-time orders (refunded ones too), with whether a refund or a resolved dispute took their benefits back. */
  orders: { id: string; customerId: string; benefitsTakenBack: boolean }[];
}

export async function holdersOfProduct(db: Executor, productId: string): Promise<ProductHolders> {
  const liveCustomers = db('customers').select('id').whereNull('deleted_at');
  const subscriptions = await db('subscriptions')
    .where({ product_id: productId })
    .whereNotIn('status', ['incomplete', 'incomplete_expired'])
    .whereIn('customer_id', liveCustomers)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id', 'customer_id', 'status');
  const orders = await db('orders')
    .where({ product_id: productId })
    .whereNull('subscription_id')
    .whereIn('status', ['paid', 'partially_refunded', 'refunded'])
    .whereIn('customer_id', liveCustomers.clone())
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(
      'id',
      'customer_id',
      db.raw(
        `(exists (select 1 from refunds r where r.order_id = orders.id and r.revoke_benefits = ? and r.status = 'succeeded')
          or exists (select 1 from disputes d where d.order_id = orders.id and d.status in ('won', 'lost'))) as taken_back`,
        [true],
      ),
    );
  return {
    subscriptions: subscriptions.map((row) => ({ id: String(row.id), customerId: String(row.customer_id), status: String(row.status) })),
    orders: orders.map((row) => ({ id: String(row.id), customerId: String(row.customer_id), benefitsTakenBack: row.taken_back === true || Number(row.taken_back) === 1 })),
  };
}
