import { createHash } from 'node:crypto';
import type { Executor } from '../db/database.js';
import { findCustomers } from '../billing/customers/repository.js';
import { findMetersByIds } from './meters-repository.js';
import { meterBalance } from './customer-meters.js';
import { customerUsage } from './quantities.js';
import type { Meter } from './schema.js';
import { serializeMeter } from './serialize.js';

interface MeteredPrice {
  id: string;
  meterId: string;
  /** Minor units per unit, as a decimal string (fractions of a cent allowed). */
  unitAmount: string;
  capAmount: number | null;
}

export interface SubscriptionMeterUsage {
  /** Stable per subscription and meter. */
  id: string;
  meter: Meter;
  priceId: string;
  consumedUnits: number;
  creditedUnits: number;
  /** What the period's consumption costs, after credits and the cap, in minor units. */
  amount: number;
}

/**
 * `unit_amount × units`, rounded half up to a whole minor unit, computed on the decimal digits so `0.1 × 3` is 0
 * (0.3 rounds down) and not a float artefact.
 */
export function meteredAmount(unitAmount: string, units: number, capAmount: number | null): number {
  const [whole, fraction = ''] = unitAmount.split('.');
  const scale = 10 ** fraction.length;
  const perUnitScaled = Number(whole) * scale + Number(fraction || '0');
  const amount = Math.round((perUnitScaled * units) / scale);
  return Math.max(0, capAmount === null ? amount : Math.min(amount, capAmount));
}

async function meteredPricesOf(db: Executor, subscriptionId: string): Promise<MeteredPrice[]> {
  const rows = await db('subscription_prices as sp')
    .join('product_prices as p', 'p.id', 'sp.price_id')
    .where('sp.subscription_id', subscriptionId)
    .where('p.amount_type', 'metered_unit')
    .orderBy('sp.position')
    .select('p.id', 'p.meter_id', 'p.unit_amount', 'p.cap_amount');
  return rows.map((row) => ({ id: String(row.id), meterId: String(row.meter_id), unitAmount: String(row.unit_amount), capAmount: row.cap_amount === null ? null : Number(row.cap_amount) }));
}

/**
 * Each metered price of a subscription with its consumption over [periodStart, periodEnd): units consumed
 * (events timestamped in the period), the customer's credited units (deducted first), and the amount due.
 */
export async function subscriptionMeterUsage(db: Executor, input: { subscriptionId: string; periodStart: Date; periodEnd: Date }): Promise<SubscriptionMeterUsage[]> {
  const subscription = await db('subscriptions').where({ id: input.subscriptionId }).first('organization_id', 'customer_id');
  if (!subscription) return [];
  const customer = (await findCustomers(db, { id: String(subscription.customer_id) }, [String(subscription.organization_id)]))[0];
  if (!customer) return [];
  const prices = await meteredPricesOf(db, input.subscriptionId);
  const meters = new Map((await findMetersByIds(db, prices.map((price) => price.meterId))).map((meter) => [meter.id, meter]));
  const usage: SubscriptionMeterUsage[] = [];
  for (const price of prices) {
    const meter = meters.get(price.meterId);
    if (!meter) continue;
    const consumed = await customerUsage(db, meter, customer, { from: input.periodStart.getTime(), to: input.periodEnd.getTime() });
    const { creditedUnits } = await meterBalance(db, meter, customer);
    const billable = Math.max(0, consumed.quantity - creditedUnits);
    usage.push({
      id: stableId(`${input.subscriptionId}:${meter.id}`),
      meter,
      priceId: price.id,
      consumedUnits: consumed.quantity,
      creditedUnits,
      amount: meteredAmount(price.unitAmount, billable, price.capAmount),
    });
  }
  return usage;
}

/**
 * The order items a renewal bills for usage: one per metered price of the subscription, for the period that just
 * ended. Tax is left at 0: the renewal computes tax over the order's subtotal like any other item's.
 */
export async function meteredLineItems(
  trx: Executor,
  input: { subscriptionId: string; periodStart: Date; periodEnd: Date },
): Promise<{ label: string; amount: number; taxAmount: number; proration: boolean; productPriceId: string | null }[]> {
  const usage = await subscriptionMeterUsage(trx, input);
  return usage.map((item) => ({
    label: meteredLineLabel(item.meter.name, item.consumedUnits, item.creditedUnits),
    amount: item.amount,
    taxAmount: 0,
    proration: false,
    productPriceId: item.priceId,
  }));
}

/** A metered order item's label: "API calls: 1 unit", "Storage GB: 30 units (5 credited)". */
export function meteredLineLabel(meterName: string, consumedUnits: number, creditedUnits: number): string {
  const credited = creditedUnits > 0 ? ` (${formatUnits(Math.min(creditedUnits, consumedUnits))} credited)` : '';
  return `${meterName}: ${formatUnits(consumedUnits)} ${consumedUnits === 1 ? 'unit' : 'units'}${credited}`;
}

// Counts agree with their noun as the CLI's count() has them (cli/resources/words.ts): singular for exactly 1 only.
const formatUnits = (units: number) => (Number.isInteger(units) ? String(units) : units.toFixed(2));

/** A UUID-shaped id derived from a key, so a subscription meter keeps its id from one read to the next. */
function stableId(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The `meters` of a Subscription on the wire (consumed_units, credited_units, amount, meter) for its current
 * period. The subscriptions serializer calls it with the meter serializer of core/metering/serialize.ts.
 */
export async function subscriptionMeters(db: Executor, input: { subscriptionId: string; periodStart: Date; periodEnd: Date }) {
  const usage = await subscriptionMeterUsage(db, input);
  return usage.map((item) => ({
    id: item.id,
    created_at: input.periodStart.toISOString(),
    modified_at: null,
    consumed_units: item.consumedUnits,
    credited_units: item.creditedUnits,
    amount: item.amount,
    meter_id: item.meter.id,
    meter: serializeMeter(item.meter),
  }));
}
