import { z } from 'zod';
import { CoreError } from '../../errors.js';
import { findOrganization } from '../organizations/repository.js';
import type { Organization } from '../organizations/schema.js';
import { findProduct, listProducts, pricesOf } from '../products/repository.js';
import { toSortCriteria } from '../shared/query.js';
import { changeProduct, previewProductChange, type PlanChangePreview, type PlanDeps } from '../subscriptions/change-product.js';
import type { SubscriptionView } from '../subscriptions/relations.js';
import { findSubscription } from '../subscriptions/repository.js';
import { CANCELLATION_REASONS } from '../subscriptions/schema.js';
import { getSubscription, subscriptionNotFound } from '../subscriptions/service.js';
import { invalid, issue, updateSubscription, type Access, type SubscriptionDeps } from '../subscriptions/update.js';
import type { CustomerPrincipal } from './service.js';

// What a customer may change of their own subscription in the portal (Polar's CustomerSubscriptionUpdate), through
// the seller's own services so the checks, events and webhooks are the same as a seller's change.

export const CustomerSubscriptionCancel = z.strictObject({
  cancel_at_period_end: z.boolean(),
  cancellation_reason: z.enum(CANCELLATION_REASONS).nullish(),
  cancellation_comment: z.string().max(10_000).nullish(),
});
export const CustomerSubscriptionUpdateProduct = z.strictObject({ product_id: z.string().min(1) });
export const CustomerSubscriptionUpdateClear = z.strictObject({ pending_update: z.null() });

export type CustomerSubscriptionUpdate =
  | ({ kind: 'cancel' } & z.infer<typeof CustomerSubscriptionCancel>)
  | ({ kind: 'product' } & z.infer<typeof CustomerSubscriptionUpdateProduct>)
  | { kind: 'clear' };

/** Forms of Polar's CustomerSubscriptionUpdate that Till cannot honour, by the field that names them, and why. */
const REFUSED: Record<string, string> = {
  seats: 'Till sells no seat-based subscriptions: a subscription has no seats to change.',
  pause_at_period_end: 'Till does not pause subscriptions: cancel at the period’s end instead.',
  resume: 'Till does not pause subscriptions, so none is to be resumed.',
};

/**
 * PATCH /v1/customer-portal/subscriptions/{id}: which form a body is, by the fields it carries. A form Till does
 * not serve (seats, pause, resume) is a 422 on its field saying why, never silently ignored.
 */
export const CustomerSubscriptionUpdate = z
  // The union documents the forms (OpenAPI); the dispatcher below validates, naming the field at fault.
  .union([CustomerSubscriptionUpdateProduct, CustomerSubscriptionUpdateClear, CustomerSubscriptionCancel])
  .catch((ctx) => ctx.input as never)
  .pipe(z.any().transform((body: unknown, ctx): CustomerSubscriptionUpdate => {
    const record = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    for (const [field, why] of Object.entries(REFUSED)) {
      if (field in record) {
        ctx.addIssue({ code: 'custom', path: [field], message: why });
        return z.NEVER;
      }
    }
    const forms = [
      ['product_id', 'product', CustomerSubscriptionUpdateProduct],
      ['pending_update', 'clear', CustomerSubscriptionUpdateClear],
      ['cancel_at_period_end', 'cancel', CustomerSubscriptionCancel],
    ] as const;
    for (const [field, kind, schema] of forms) {
      if (!(field in record)) continue;
      const parsed = schema.safeParse(record);
      if (parsed.success) return { kind, ...parsed.data } as CustomerSubscriptionUpdate;
      for (const found of parsed.error.issues) ctx.addIssue({ code: 'custom', path: found.path, message: found.message });
      return z.NEVER;
    }
    ctx.addIssue({ code: 'custom', path: [], message: 'Give one of: {product_id}, {cancel_at_period_end, cancellation_reason, cancellation_comment} or {pending_update: null}' });
    return z.NEVER;
  }));

/** Whether the organization lets its customers change plan in the portal (both of its settings must allow it). */
export function customersMayChangePlan(organization: Organization): boolean {
  return organization.settings.subscription_settings.allow_customer_updates && organization.settings.customer_portal_settings.subscription.update_plan;
}

const planChangeNotAllowed = () => new CoreError('forbidden', 'SUBSCRIPTION_PLAN_UPDATE_NOT_ALLOWED', 'Updating subscription plan is not allowed.');

/** The session customer's own subscription, and its organization; another customer's reads as not found. */
async function ownSubscription(deps: PlanDeps, customer: CustomerPrincipal, id: string) {
  const s = await findSubscription(deps.db, id, [customer.organizationId]);
  if (!s || s.customerId !== customer.customerId) throw subscriptionNotFound();
  const organization = await findOrganization(deps.db, customer.organizationId);
  if (!organization) throw subscriptionNotFound();
  return { s, organization };
}

/** The product a customer may move to: one the organization shows publicly (the seller's private plans stay theirs). */
async function checkPlanChange(deps: PlanDeps, customer: CustomerPrincipal, id: string, productId: string) {
  const { organization } = await ownSubscription(deps, customer, id);
  if (!customersMayChangePlan(organization)) throw planChangeNotAllowed();
  const product = await findProduct(deps.db, productId, [organization.id]);
  if (!product || product.visibility !== 'public') throw invalid([issue('product_id', 'Product not found.')]);
  return organization;
}

const customerAccess = (customer: CustomerPrincipal): Access => {
  const organizations = new Set([customer.organizationId]);
  return { read: organizations, write: organizations };
};

/** A product the customer may move a subscription to, at its fixed price per period. */
export interface PlanOption {
  productId: string;
  name: string;
  description: string | null;
  amount: number;
  currency: string;
}

/**
 * The products the session customer may move this subscription to: when the organization allows plan changes, its
 * public live products billed on the subscription's interval with a fixed price in its currency (what changeProduct
 * accepts), but the current one. Empty when changes are not allowed; a subscription the change would refuse (ended,
 * payment owed) shows its refusal at the preview.
 */
export async function customerPlanOptions(deps: PlanDeps, customer: CustomerPrincipal, id: string): Promise<{ allowed: boolean; options: PlanOption[] }> {
  const { s, organization } = await ownSubscription(deps, customer, id);
  if (!customersMayChangePlan(organization)) return { allowed: false, options: [] };
  const filter = { organizationIds: [organization.id], isArchived: false, isRecurring: true, visibilities: ['public' as const], metadata: {} };
  const products = (await listProducts(deps.db, filter, toSortCriteria(['created_at']), { page: 1, limit: 100 })).items.filter(
    (p) => p.id !== s.productId && p.recurringInterval === s.recurringInterval && (p.recurringIntervalCount ?? 1) === s.recurringIntervalCount,
  );
  const prices = await pricesOf(deps.db, products.map((p) => p.id));
  const options: PlanOption[] = [];
  for (const product of products) {
    const price = prices.get(product.id)?.find((p) => p.priceCurrency === s.currency && p.amountType === 'fixed');
    if (price?.amountType !== 'fixed') continue;
    options.push({ productId: product.id, name: product.name, description: product.description ?? null, amount: price.priceAmount, currency: s.currency });
  }
  return { allowed: true, options: options.sort((a, b) => a.amount - b.amount) };
}

/**
 * The prorated amounts the session customer would be billed for moving their subscription to `productId` now,
 * with the organization's proration behaviour, changing nothing: for the portal page to show before confirming.
 * Refuses exactly what the change itself would refuse.
 */
export async function previewCustomerPlanChange(deps: PlanDeps, customer: CustomerPrincipal, id: string, productId: string): Promise<PlanChangePreview> {
  const organization = await checkPlanChange(deps, customer, id, productId);
  return previewProductChange(deps, customerAccess(customer), id, productId, organization.settings.subscription_settings.proration_behavior);
}

/** A customer's change to one of their own subscriptions: plan, cancel at period end or uncancel, or clear a pending update. */
export async function updateCustomerSubscription(deps: SubscriptionDeps, customer: CustomerPrincipal, id: string, update: CustomerSubscriptionUpdate): Promise<SubscriptionView> {
  const access = customerAccess(customer);
  switch (update.kind) {
    case 'product': {
      const organization = await checkPlanChange(deps, customer, id, update.product_id);
      return changeProduct(deps, access, id, update.product_id, organization.settings.subscription_settings.proration_behavior);
    }
    case 'cancel':
      await ownSubscription(deps, customer, id);
      return updateSubscription(deps, access, id, {
        kind: 'cancel',
        cancel_at_period_end: update.cancel_at_period_end,
        customer_cancellation_reason: update.cancellation_reason,
        customer_cancellation_comment: update.cancellation_comment,
      });
    case 'clear': {
      // Till applies a plan change at once (prorated) and never schedules one: there is no pending update to clear.
      await ownSubscription(deps, customer, id);
      return getSubscription(deps.db, access.read, id);
    }
  }
}
