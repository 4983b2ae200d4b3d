import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { findBenefit } from '../benefits/repository.js';
import type { Benefit } from '../benefits/schema.js';
import { findCustomers } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { listGrants, type GrantFilter } from './repository.js';
import type { BenefitGrant } from './schema.js';

/** A grant with the customer and benefit its wire shape embeds. */
export interface GrantView {
  grant: BenefitGrant;
  customer: Customer;
  benefit: Benefit;
}

/**
 * GET /v1/benefit-grants/ and GET /v1/benefits/{id}/grants: grants in the organizations the caller reads
 * (`readable`). With `benefitId`, the benefit must be one of them (404 otherwise, as Polar answers).
 */
export async function listBenefitGrants(
  db: Database,
  readable: ReadonlySet<string>,
  filter: GrantFilter,
  sorting: readonly SortCriterion[],
  page: PageQuery,
  options: { benefitId?: string } = {},
): Promise<Page<GrantView>> {
  if (options.benefitId && !(await findBenefit(db, options.benefitId, readable))) throw new CoreError('not_found', 'BENEFIT_NOT_FOUND', 'Benefit not found');
  const rows = await listGrants(db, filter, sorting, page);
  const customers = new Map<string, Customer>();
  const benefits = new Map<string, Benefit>();
  const items: GrantView[] = [];
  for (const grant of rows.items) {
    const customer = customers.get(grant.customerId) ?? (await findCustomers(db, { id: grant.customerId }, [grant.organizationId]))[0];
    const benefit = benefits.get(grant.benefitId) ?? (await findBenefit(db, grant.benefitId, [grant.organizationId]));
    // The repository lists grants of live customers and benefits only, so both are found.
    if (!customer || !benefit) continue;
    customers.set(customer.id, customer);
    benefits.set(benefit.id, benefit);
    items.push({ grant, customer, benefit });
  }
  return { items, totalCount: rows.totalCount };
}
