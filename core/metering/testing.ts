import type { Database } from '../db/database.js';
import { findCustomers } from '../billing/customers/repository.js';
import { refreshCustomerMeters } from './customer-meters.js';

/** Tests: recomputes a customer's meters now (instead of waiting for the refresh job) and returns one of their ids. */
export async function refreshedCustomerMeter(db: Database, organizationId: string, customerId: string, meterId?: string): Promise<string> {
  await db.transaction(async (trx) => {
    const [customer] = await findCustomers(trx, { id: customerId }, [organizationId]);
    if (customer) await refreshCustomerMeters(trx, new Date(), customer);
  });
  const row = await db('customer_meters').where({ customer_id: customerId, ...(meterId ? { meter_id: meterId } : {}) }).orderBy('created_at').first('id');
  if (!row) throw new Error('the customer has no meter');
  return String(row.id);
}
