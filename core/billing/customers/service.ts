import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { recordEvent } from '../../webhooks/outbox.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Address } from './address.js';
import { ambiguousExternalId, customerInvalid, customerNotFound, customersReadOnly, type CustomerIssue } from './errors.js';
import {
  duplicateField,
  findCustomers,
  insertCustomer,
  isEmailTaken,
  isExternalIdTaken,
  listCustomers as listRows,
  saveCustomer,
} from './repository.js';
import type { Customer, CustomerCreate, CustomerKey, CustomerUpdate } from './schema.js';
import { serializeCustomer } from './serialize.js';
import { customerStateOf } from '../customer-state/service.js';
import { revokeCustomerBenefits } from '../benefit-grants/service.js';
import { organizationClock } from '../../jobs/clock.js';
import { customerExternalIdSet } from '../../metering/customer-meters.js';
import { anonymizeLifecycleEvents } from '../../metering/lifecycle.js';
import { revokeSubscriptionsOfCustomer } from '../subscriptions/renewal.js';
import { parseTaxId, type TaxId } from './tax-id.js';

/** The organizations a call may read customers of, and those where it may also change them. */
export interface CustomerReach {
  readable: ReadonlySet<string>;
  writable: ReadonlySet<string>;
}

/** The live customer a key names among these organizations; anything else is "not found" (tenancy). */
async function findOne(db: Knex, key: CustomerKey, organizations: ReadonlySet<string>, options: { forUpdate?: boolean } = {}): Promise<Customer> {
  const scope = 'organizationId' in key && key.organizationId ? [key.organizationId].filter((id) => organizations.has(id)) : [...organizations];
  const [customer, another] = await findCustomers(db, key, scope, options);
  if (!customer) throw customerNotFound();
  if (another) throw ambiguousExternalId();
  return customer;
}

/** Found among the readable organizations (404 otherwise), then writable there (403 otherwise). */
async function findWritable(trx: Knex.Transaction, reach: CustomerReach, key: CustomerKey): Promise<Customer> {
  const customer = await findOne(trx, key, reach.readable, { forUpdate: true });
  if (!reach.writable.has(customer.organizationId)) throw customersReadOnly();
  return customer;
}

/** Reads a tax ID value as one of the billing country's formats, as Polar does. */
function resolveTaxId(value: string | null | undefined, address: Address | null): TaxId | null {
  if (!value) return null;
  if (!address) throw customerInvalid(['TAX_ID_NEEDS_COUNTRY']);
  const taxId = parseTaxId(value, address.country);
  if (!taxId) throw customerInvalid(['TAX_ID_INVALID']);
  return taxId;
}

/** Runs a write, turning a unique-index collision (two requests racing past the checks) into the same 422. */
async function uniquely<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const field = duplicateField(error);
    if (field) throw customerInvalid([field === 'email' ? 'EMAIL_TAKEN' : 'EXTERNAL_ID_TAKEN']);
    throw error;
  }
}

/** customer.updated and customer.state_changed for a change made elsewhere (a card added or removed in the portal). */
export const announceCustomerUpdated = (trx: Knex.Transaction, clock: Clock, customer: Customer) => announce(trx, clock, 'customer.updated', customer);

/** Polar announces a customer's state along with every change to the customer: two events, one transaction. */
async function announce(trx: Knex.Transaction, clock: Clock, type: 'customer.created' | 'customer.updated' | 'customer.deleted', customer: Customer, previous?: Customer) {
  await recordEvent(trx, clock, { organizationId: customer.organizationId, type, data: serializeCustomer(customer), previous: previous && serializeCustomer(previous) });
  await recordEvent(trx, clock, { organizationId: customer.organizationId, type: 'customer.state_changed', data: await customerStateOf(trx, customer) });
}

export function getCustomer(db: Database, readable: ReadonlySet<string>, key: CustomerKey): Promise<Customer> {
  return findOne(db, key, readable);
}

export function listCustomers(
  db: Database,
  readable: ReadonlySet<string>,
  filter: { organizationIds?: readonly string[]; email?: string; query?: string; active?: boolean; metadata: Record<string, string[]> },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<Customer>> {
  const organizationIds = filter.organizationIds ? filter.organizationIds.filter((id) => readable.has(id)) : [...readable];
  return listRows(db, { organizationIds, email: filter.email, query: filter.query, active: filter.active, metadata: filter.metadata }, sorting, page);
}

/** Creates a customer (emits customer.created and customer.state_changed); email and external id are unique per organization. */
export async function createCustomer(db: Database, clock: Clock, organizationId: string, input: CustomerCreate): Promise<Customer> {
  const billingAddress = input.billing_address ?? null;
  const taxId = resolveTaxId(input.tax_id, billingAddress);
  return db.transaction(async (trx) => {
    const issues: CustomerIssue[] = [];
    if (await isEmailTaken(trx, organizationId, input.email)) issues.push('EMAIL_TAKEN');
    if (input.external_id && (await isExternalIdTaken(trx, organizationId, input.external_id))) issues.push('EXTERNAL_ID_TAKEN');
    if (issues.length) throw customerInvalid(issues as [CustomerIssue, ...CustomerIssue[]]);
    const customer: Customer = {
      id: newId(),
      organizationId,
      externalId: input.external_id ?? null,
      email: input.email,
      emailVerified: false,
      name: input.name ?? null,
      billingName: null,
      billingAddress,
      taxId,
      locale: input.locale ?? null,
      metadata: input.metadata,
      createdAt: clock.now(),
      modifiedAt: null,
      deletedAt: null,
    };
    await uniquely(() => insertCustomer(trx, customer));
    if (customer.externalId) await customerExternalIdSet(trx, clock, organizationId, customer.id);
    await announce(trx, clock, 'customer.created', customer);
    return customer;
  });
}

/**
 * Applies an update (emits customer.updated and customer.state_changed). `null` clears name, billing name (the
 * portal's), locale and tax_id and leaves email and metadata as they are; the external id may be set once; a billing address may change, not go.
 */
export async function updateCustomer(db: Database, clock: Clock, reach: CustomerReach, key: CustomerKey, input: CustomerUpdate & { billing_name?: string | null; email_verified?: boolean }): Promise<Customer> {
  return db.transaction(async (trx) => {
    const current = await findWritable(trx, reach, key);
    const issues: CustomerIssue[] = [];
    const email = input.email ?? current.email;
    const emailChanged = email.toLowerCase() !== current.email.toLowerCase();
    if (emailChanged && (await isEmailTaken(trx, current.organizationId, email, current.id))) issues.push('EMAIL_TAKEN');
    if (input.billing_address === null && current.billingAddress) issues.push('BILLING_ADDRESS_REQUIRED');
    const externalId = input.external_id === undefined ? current.externalId : input.external_id;
    if (externalId !== current.externalId) {
      if (current.externalId !== null) issues.push('EXTERNAL_ID_IMMUTABLE');
      else if (externalId !== null && (await isExternalIdTaken(trx, current.organizationId, externalId))) issues.push('EXTERNAL_ID_TAKEN');
    }
    if (issues.length) throw customerInvalid(issues as [CustomerIssue, ...CustomerIssue[]]);
    const billingAddress = input.billing_address ?? current.billingAddress;
    // The tax ID is checked again whenever it or the country it belongs to may have changed.
    const taxId = resolveTaxId(input.tax_id === undefined ? current.taxId?.[0] : input.tax_id, billingAddress);
    const next: Customer = {
      ...current,
      email,
      // An address proven by a link mailed to it (the portal's email update) is verified; any other change is not.
      emailVerified: input.email_verified ?? (emailChanged ? false : current.emailVerified),
      externalId,
      name: input.name === undefined ? current.name : input.name,
      billingName: input.billing_name === undefined ? current.billingName : input.billing_name,
      billingAddress,
      taxId,
      locale: input.locale === undefined ? current.locale : input.locale,
      metadata: input.metadata ?? current.metadata,
      modifiedAt: clock.now(),
    };
    if (!(await uniquely(() => saveCustomer(trx, next)))) throw customerNotFound();
    if (next.externalId !== current.externalId) await customerExternalIdSet(trx, clock, next.organizationId, next.id);
    await announce(trx, clock, 'customer.updated', next, current);
    return next;
  });
}

const ANONYMIZED_EMAIL_DOMAIN = 'anonymized.invalid';
const anonymize = (value: string, createdAt: Date) => createHash('sha256').update(createdAt.toISOString()).update(value).digest('hex');

/**
 * Soft-deletes a customer (emits customer.deleted and customer.state_changed): the row stays, its email and external id
 * are free for a new customer. `anonymize` also replaces email and names with hashes and drops the billing address
 * (GDPR); a business's name (one with a tax ID) is kept, as Polar does.
 */
export async function deleteCustomer(db: Database, clock: Clock, reach: CustomerReach, key: CustomerKey, options: { anonymize: boolean; baseUrl?: string }): Promise<void> {
  await db.transaction(async (trx) => {
    const current = await findWritable(trx, reach, key);
    const now = clock.now();
    // Polar keeps the freed external id in the metadata, so support can still trace the customer.
    const metadata = current.externalId ? { ...current.metadata, __external_id: current.externalId } : current.metadata;
    let next: Customer = { ...current, externalId: null, metadata, deletedAt: now, modifiedAt: now };
    if (options.anonymize) {
      next = {
        ...next,
        email: `${anonymize(current.email, current.createdAt)}@${ANONYMIZED_EMAIL_DOMAIN}`,
        emailVerified: false,
        name: current.name && !current.taxId ? anonymize(current.name, current.createdAt) : current.name,
        billingName: current.billingName ? anonymize(current.billingName, current.createdAt) : null,
        billingAddress: null,
        metadata: { ...metadata, __anonymized_at: now.toISOString() },
      };
    }
    // Polar ends a deleted customer's subscriptions now and revokes what they were granted (license keys
    // disabled, meter credits taken back).
    const organizationNow = await organizationClock(trx, clock, current.organizationId);
    await revokeSubscriptionsOfCustomer(trx, organizationNow, options.baseUrl ?? '', current.id);
    await revokeCustomerBenefits(trx, organizationNow, current.organizationId, current.id);
    if (!(await saveCustomer(trx, next))) throw customerNotFound();
    await announce(trx, clock, 'customer.deleted', next);
    if (options.anonymize) await anonymizeLifecycleEvents(trx, serializeCustomer(next));
  });
}
