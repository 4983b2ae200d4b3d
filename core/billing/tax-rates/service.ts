import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import { deleteTaxRate as deleteRow, findTaxRate, insertTaxRate, listTaxRates as listRows } from './repository.js';
import type { TaxRate, TaxRateCreate } from './schema.js';

const notFound = () => new CoreError('not_found', 'TAX_RATE_NOT_FOUND', 'Tax rate not found');

export function listTaxRates(db: Database, filter: { organizationIds: readonly string[]; country?: string }, page: PageQuery): Promise<Page<TaxRate>> {
  return listRows(db, filter, page);
}

export async function getTaxRate(db: Database, readable: ReadonlySet<string>, id: string): Promise<TaxRate> {
  const rate = await findTaxRate(db, id, readable);
  if (!rate) throw notFound();
  return rate;
}

/** Adds a rate for a country (or one of its states); one rate per country and state. */
export async function createTaxRate(db: Database, clock: Clock, organizationId: string, input: TaxRateCreate): Promise<TaxRate> {
  const rate: TaxRate = { id: newId(), organizationId, country: input.country, state: input.state, basisPoints: input.basis_points, createdAt: clock.now(), modifiedAt: null };
  if (!(await insertTaxRate(db, rate))) {
    const where = rate.state ? `${rate.state}` : rate.country;
    throw new CoreError('invalid', 'TAX_RATE_EXISTS', 'A tax rate for this place exists', [
      { loc: ['body', rate.state ? 'state' : 'country'], msg: `A tax rate for ${where} already exists; delete it first to change it.`, type: 'value_error' },
    ]);
  }
  return rate;
}

/** Removes a rate; checkouts created afterwards no longer charge it (orders keep what they charged). */
export async function deleteTaxRate(db: Database, access: { read: ReadonlySet<string>; write: ReadonlySet<string> }, id: string): Promise<void> {
  const rate = await findTaxRate(db, id, access.read);
  if (!rate) throw notFound();
  if (!access.write.has(rate.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this tax rate but not delete it');
  await deleteRow(db, id);
}
