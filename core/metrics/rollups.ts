import type { Executor } from '../db/database.js';
import { addCheckouts, addOrders, addSubscriptions, difference, emptyRollups, type Rollups } from './rollup-rows.js';
import {
  addToRollups,
  checkoutFacts,
  clearRollups,
  lockMetricsScope,
  orderFacts,
  orderOwner,
  organizationFacts,
  organizationIdsOf,
  subscriptionFacts,
} from './rollups-repository.js';

/**
 * Keeps the hourly metrics rollups (docs/metrics.md, "Rollups") in step with the orders, subscriptions and
 * checkouts: every write of those tables goes through `trackMetrics` in its own transaction, which computes what
 * the scope it touches adds to the rollups before and after the write and adds the difference. The rollups so can
 * never disagree with the rows, even after a crash: both commit or neither does.
 */
export interface MetricsScope {
  /** Serializes the writers of one scope on PostgreSQL (a customer's orders and subscriptions, or a checkout). */
  lock: string;
  /** One-time orders (orders of a subscription are taken with all of their subscription's). */
  orderIds?: readonly string[];
  /** Subscriptions whose orders the change moves. */
  subscriptionIds?: readonly string[];
  /** Customers whose subscriptions the change moves (a customer counts once in ARPU: all of theirs are taken). */
  customerIds?: readonly string[];
  checkoutIds?: readonly string[];
}

async function rollupsOf(trx: Executor, scope: MetricsScope): Promise<Rollups> {
  const rollups = emptyRollups();
  if (scope.orderIds?.length || scope.subscriptionIds?.length) {
    const { orders, starts } = await orderFacts(trx, scope.orderIds ?? [], scope.subscriptionIds ?? []);
    addOrders(rollups, orders, starts);
  }
  if (scope.customerIds?.length) addSubscriptions(rollups, await subscriptionFacts(trx, scope.customerIds));
  if (scope.checkoutIds?.length) addCheckouts(rollups, await checkoutFacts(trx, scope.checkoutIds));
  return rollups;
}

/** Runs a write of orders, subscriptions or checkouts and moves the rollups by what it changed (in the caller's transaction). */
export async function trackMetrics<T>(trx: Executor, scope: MetricsScope, write: () => Promise<T>): Promise<T> {
  await lockMetricsScope(trx, scope.lock);
  const before = await rollupsOf(trx, scope);
  const result = await write();
  await addToRollups(trx, difference(await rollupsOf(trx, scope), before));
  return result;
}

/** The scope of a write of one order: itself, or all of its subscription's orders. */
export const orderScope = (order: { id: string; customerId: string; subscriptionId: string | null }): MetricsScope => ({
  lock: `customer:${order.customerId}`,
  orderIds: [order.id],
  subscriptionIds: order.subscriptionId ? [order.subscriptionId] : [],
});

/** `trackMetrics` for a change of a stored order. */
export async function trackOrder<T>(trx: Executor, orderId: string, write: () => Promise<T>): Promise<T> {
  const owner = await orderOwner(trx, orderId);
  if (!owner) return write();
  return trackMetrics(trx, orderScope({ id: orderId, ...owner }), write);
}

/** The scope of a write of one subscription: its customer's subscriptions and its own orders (its start classifies them). */
export const subscriptionScope = (subscription: { id: string; customerId: string }, formerCustomerId?: string): MetricsScope => ({
  lock: `customer:${subscription.customerId}`,
  subscriptionIds: [subscription.id],
  customerIds: [...new Set([subscription.customerId, formerCustomerId ?? subscription.customerId])],
});

export const checkoutScope = (checkoutId: string): MetricsScope => ({ lock: `checkout:${checkoutId}`, checkoutIds: [checkoutId] });

/**
 * Rebuilds the rollups from the rows, organization by organization (migration 0050, and the benchmark after it
 * seeds rows directly). Each organization in one transaction of the caller's choosing: pass a transaction to
 * keep writers out.
 */
export async function rebuildMetricsRollups(db: Executor, organizationIds?: readonly string[]): Promise<void> {
  for (const organizationId of organizationIds ?? (await organizationIdsOf(db))) {
    const facts = await organizationFacts(db, organizationId);
    const rollups = emptyRollups();
    addOrders(rollups, facts.orders, facts.starts);
    addSubscriptions(rollups, facts.subscriptions);
    addCheckouts(rollups, facts.checkouts);
    await clearRollups(db, organizationId);
    // Less the rows that came to nothing (a subscription started and ended within one hour).
    await addToRollups(db, difference(rollups, emptyRollups()));
  }
}
