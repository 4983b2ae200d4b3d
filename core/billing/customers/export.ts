import type { Database } from '../../db/database.js';
import { isoformatInZone } from '../../metering/buckets.js';
import { csvLine, metadataJson, pages, type CsvExport } from '../shared/csv.js';
import { toSortCriteria } from '../shared/query.js';
import type { Customer } from './schema.js';
import { listCustomers } from './service.js';

const HEADER = [
  'ID',
  'External ID',
  'Created At',
  'Email',
  'Name',
  'Tax ID',
  'Billing Address Line 1',
  'Billing Address Line 2',
  'Billing Address City',
  'Billing Address State',
  'Billing Address Zip',
  'Billing Address Country',
  'Metadata',
];

export type CustomerExportFilter = Parameters<typeof listCustomers>[2];

// Polar writes the stored tax id pair as Python prints a list.
const taxIdText = (customer: Customer) => (customer.taxId ? `['${customer.taxId[0]}', '${customer.taxId[1]}']` : null);

function row(customer: Customer) {
  const address = customer.billingAddress;
  return csvLine([
    customer.id,
    customer.externalId,
    isoformatInZone(customer.createdAt, 'UTC'),
    customer.email,
    customer.name,
    taxIdText(customer),
    address?.line1,
    address?.line2,
    address?.city,
    address?.state,
    address?.postal_code,
    address?.country,
    metadataJson(customer.metadata),
  ]);
}

/** customers.export: the live customers the caller reads, with the list's filters, as Polar's CSV (oldest first). */
export function exportCustomers(db: Database, readable: ReadonlySet<string>, filter: CustomerExportFilter): CsvExport {
  const sorting = toSortCriteria(['created_at']);
  async function* lines() {
    yield csvLine(HEADER);
    for await (const customer of pages((page) => listCustomers(db, readable, filter, sorting, page))) yield row(customer);
  }
  return { filename: 'polar-customers.csv', lines: lines() };
}
