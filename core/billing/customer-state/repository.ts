import type { Executor } from '../../db/database.js';
import { preparedRowsOnPostgres } from '../../db/sql.js';
import { toGrant } from '../benefit-grants/repository.js';
import type { BenefitGrant } from '../benefit-grants/schema.js';
import { toBenefit } from '../benefits/repository.js';
import type { Benefit } from '../benefits/schema.js';
import { toCustomer } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import { toSubscription } from '../subscriptions/repository.js';
import { ACTIVE_STATUSES, type Subscription } from '../subscriptions/schema.js';

/** What a customer's state is made of, as read by customerStateRowsOnPostgres. */
export interface CustomerStateRows {
  customer: Customer;
  /** Active and trialing subscriptions, oldest first (subscriptionsOfCustomer's order). */
  subscriptions: Subscription[];
  /** Grants in effect, in the order they were granted (activeGrantsOf's). */
  grants: BenefitGrant[];
  /** The live benefits of the customer's organization those grants are of. */
  benefits: Benefit[];
  /** Whether the customer has active meters (activeCustomerMeters then reads them with their balances). */
  hasMeters: boolean;
}

/** `(select …)` rows as one JSON array (an empty one for none), in an order. */
const jsonRows = (select: string, orderBy: string) => `coalesce((select json_agg(r order by ${orderBy}) from (${select}) r), '[]')`;

const GRANTED = `select * from benefit_grants where customer_id = c.id and granted_at is not null and revoked_at is null`;

/**
 * On PostgreSQL, a live customer of the organizations with its active subscriptions (and their prices), its grants in
 * effect and their benefits, in one statement instead of five: each query there is a round trip, and its socket
 * writes were most of a read's CPU (docs/performance.md, "Reads"). The rows the separate queries read, as JSON (the
 * row mappers read timestamps as ISO text, bigints as numbers, jsonb as objects alike). A named (prepared)
 * statement, see preparedOnPostgres.
 */
export async function customerStateRowsOnPostgres(db: Executor, customerId: string, organizationIds: Iterable<string>): Promise<CustomerStateRows | undefined> {
  const organizations = [...organizationIds];
  if (organizations.length === 0) return undefined;
  const statuses = [...ACTIVE_STATUSES];
  const [row] = await preparedRowsOnPostgres(
    db,
    `till_customer_state_rows_${organizations.length}`,
    `select to_json(c) as customer_row,
      ${jsonRows(
        `select s.*, coalesce((select json_agg(sp.price_id order by sp.position) from subscription_prices sp where sp.subscription_id = s.id), '[]') as price_ids
          from subscriptions s where s.customer_id = c.id and s.status in (${statuses.map(() => '?').join(', ')})`,
        'r.created_at, r.id',
      )} as subscription_rows,
      ${jsonRows(GRANTED, 'r.granted_at, r.id')} as grant_rows,
      ${jsonRows(`select * from benefits where organization_id = c.organization_id and deleted_at is null and id in (select benefit_id from (${GRANTED}) g)`, 'r.id')} as benefit_rows,
      exists (select 1 from customer_meters cm join meters m on m.id = cm.meter_id where cm.customer_id = c.id and m.archived_at is null) as has_meters
    from customers c where c.id = ? and c.organization_id in (${organizations.map(() => '?').join(', ')}) and c.deleted_at is null`,
    [...statuses, customerId, ...organizations],
  );
  if (!row) return undefined;
  return {
    customer: toCustomer(row.customer_row),
    subscriptions: row.subscription_rows.map((s: Record<string, unknown>) => toSubscription(s, s.price_ids as string[])),
    grants: row.grant_rows.map(toGrant),
    benefits: row.benefit_rows.map(toBenefit),
    hasMeters: row.has_meters === true,
  };
}
