import type { Database } from '../../db/database.js';
import { isoformatInZone } from '../../metering/buckets.js';
import { csvLine, majorUnits, pages, type CsvExport, type CsvValue } from '../shared/csv.js';
import { toSortCriteria } from '../shared/query.js';
import type { OrderFilter } from './schema.js';
import { orderDescription } from './serialize.js';
import { listOrders, type OrderView } from './service.js';

/** Polar's order export columns, each with its header; the first seven are the default. */
export const ORDER_EXPORT_COLUMNS = {
  email: 'Email',
  created_at: 'Created At',
  product: 'Product',
  net_amount: 'Net Amount',
  currency: 'Currency',
  status: 'Status',
  invoice_number: 'Invoice number',
  customer_name: 'Customer Name',
  billing_name: 'Billing Name',
  billing_country: 'Billing Country',
  subtotal_amount: 'Subtotal',
  discount_amount: 'Discount',
  tax_amount: 'Tax',
  total_amount: 'Total',
  refunded_amount: 'Refunded Amount',
  billing_reason: 'Billing Reason',
} as const;
export type OrderExportColumn = keyof typeof ORDER_EXPORT_COLUMNS;
export const ORDER_EXPORT_COLUMN_NAMES = Object.keys(ORDER_EXPORT_COLUMNS) as [OrderExportColumn, ...OrderExportColumn[]];
const DEFAULT_COLUMNS = ORDER_EXPORT_COLUMN_NAMES.slice(0, 7);

export interface OrderExportOptions {
  /** IANA zone the dates are written in (Polar: UTC by default). */
  timeZone: string;
  columns?: readonly OrderExportColumn[];
}

function values({ order, relations }: OrderView, timeZone: string): Record<OrderExportColumn, CsvValue> {
  const customer = relations.customers.get(order.customerId);
  return {
    email: customer?.email,
    created_at: isoformatInZone(order.createdAt, timeZone),
    product: orderDescription(order, relations),
    net_amount: majorUnits(order.netAmount),
    currency: order.currency,
    status: order.status,
    invoice_number: order.invoiceNumber,
    customer_name: customer?.name,
    billing_name: order.billingName,
    billing_country: order.billingAddress?.country,
    subtotal_amount: majorUnits(order.subtotalAmount),
    discount_amount: majorUnits(order.discountAmount),
    tax_amount: majorUnits(order.taxAmount),
    total_amount: majorUnits(order.totalAmount),
    refunded_amount: majorUnits(order.refundedAmount),
    billing_reason: order.billingReason,
  };
}

/** The file name Polar gives: the created_after/created_before dates, in the zone, when given. */
function filename(filter: OrderFilter, timeZone: string): string {
  const bounds = [filter.createdAfter, filter.createdBefore].filter((bound): bound is Date => bound !== undefined);
  return `polar-orders${bounds.map((bound) => `-${isoformatInZone(bound, timeZone).slice(0, 10)}`).join('')}.csv`;
}

/** orders.export: the orders the filter finds, as Polar's CSV (oldest first), in the columns asked for. */
export function exportOrders(db: Database, filter: OrderFilter, options: OrderExportOptions): CsvExport {
  const columns = options.columns?.length ? options.columns : DEFAULT_COLUMNS;
  const sorting = toSortCriteria(['created_at']);
  async function* lines() {
    yield csvLine(columns.map((column) => ORDER_EXPORT_COLUMNS[column]));
    for await (const view of pages((page) => listOrders(db, filter, sorting, page))) {
      const row = values(view, options.timeZone);
      yield csvLine(columns.map((column) => row[column]));
    }
  }
  return { filename: filename(filter, options.timeZone), lines: lines() };
}
