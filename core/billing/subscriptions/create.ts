import { z } from 'zod';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { grantBenefits } from '../benefit-grants/service.js';
import { isFreePrice, selectPrice } from '../checkouts/pricing.js';
import { ExternalId } from '../customers/schema.js';
import { findCustomers } from '../customers/repository.js';
import { findOrganization } from '../organizations/repository.js';
import { findProduct } from '../products/repository.js';
import { withRelations } from '../products/relations.js';
import type { Product } from '../products/schema.js';
import { Metadata } from '../shared/metadata.js';
import { viewsOf, type SubscriptionView } from './relations.js';
import { findSubscription } from './repository.js';
import { serializeSubscription } from './serialize.js';
import { createSubscription } from './service.js';
import type { Access, SubscriptionDeps } from './update.js';

/**
 * POST /v1/subscriptions/ (Polar's SubscriptionCreate): a recurring product whose price is free, for an existing
 * customer named by `customer_id` or `external_customer_id`.
 */
export const SubscriptionCreate = z
  .object({
    product_id: z.uuid(),
    customer_id: z.uuid().optional(),
    external_customer_id: ExternalId.optional(),
    metadata: Metadata.optional(),
  })
  .superRefine((input, ctx) => {
    if (input.customer_id === undefined && input.external_customer_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['customer_id'], message: 'Field required: customer_id or external_customer_id' });
    }
  });
export type SubscriptionCreate = z.infer<typeof SubscriptionCreate>;

const refused = (field: string, msg: string) => new CoreError('invalid', 'INVALID_SUBSCRIPTION', msg, [{ loc: ['body', field], msg, type: 'value_error' }]);

/** Polar's checks, in its order: the product exists, recurs, is not a legacy one, and its default price is free. */
function productProblem(product: Product | undefined, currency: string): string | null {
  if (!product) return 'Product does not exist.';
  if (product.recurringInterval === null) return 'Product is not a recurring product.';
  if (product.prices.some((price) => price.legacyRecurringInterval !== null)) return 'Legacy recurring products are not supported.';
  const inCurrency = product.prices.filter((price) => price.priceCurrency === currency);
  const price = inCurrency.length ? selectPrice({ ...product, prices: inCurrency }, {}) : undefined;
  if (!price || !isFreePrice(price)) return 'Product is not free. The customer should go through a checkout to create a paid subscription.';
  return null;
}

/**
 * Subscribes a customer to a free recurring product without a checkout, as Polar's subscriptions.create: active at
 * once for a period from now, in the organization's default currency, with the product's prices in it. No order is
 * made; the events are a checkout's (subscription.created, .active, customer.state_changed, the benefit grants) plus
 * the subscription.updated Polar sends after a create.
 */
export async function createFreeSubscription(deps: SubscriptionDeps, access: Access, input: SubscriptionCreate): Promise<SubscriptionView> {
  return deps.db.transaction(async (trx) => {
    const stored = await findProduct(trx, input.product_id, access.read, { forShare: true });
    const [product] = stored ? await withRelations(trx, [stored]) : [undefined];
    const organization = product ? await findOrganization(trx, product.organizationId) : undefined;
    const currency = organization?.settings.default_presentment_currency ?? 'usd';
    const problem = productProblem(product, currency);
    if (problem || !product) throw refused('product_id', problem ?? 'Product does not exist.');
    if (!access.write.has(product.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this product but not subscribe customers to it');

    const field = input.customer_id !== undefined ? 'customer_id' : 'external_customer_id';
    const key = input.customer_id !== undefined ? { id: input.customer_id } : { externalId: input.external_customer_id! };
    const [customer] = await findCustomers(trx, key, [product.organizationId]);
    if (!customer) throw refused(field, 'Customer does not exist.');

    const clock = await organizationClock(trx, deps.clock, product.organizationId);
    const created = await createSubscription(trx, clock, {
      organizationId: product.organizationId,
      customerId: customer.id,
      productId: product.id,
      priceIds: product.prices.filter((price) => price.priceCurrency === currency).map((price) => price.id),
      amount: 0,
      currency,
      recurringInterval: product.recurringInterval!,
      recurringIntervalCount: product.recurringIntervalCount ?? 1,
      discountId: null,
      checkoutId: null,
      paymentMethodId: null,
      trialEnd: null,
      metadata: input.metadata ?? {},
      customFieldData: {},
      baseUrl: deps.baseUrl,
    });
    const [view] = await viewsOf(trx, [(await findSubscription(trx, created.id, [product.organizationId]))!]);
    await recordEvent(trx, clock, { organizationId: product.organizationId, type: 'subscription.updated', data: serializeSubscription(view, deps.baseUrl) });
    await grantBenefits(trx, clock, { organizationId: product.organizationId, customerId: customer.id, productId: product.id, orderId: null, subscriptionId: created.id });
    return view;
  });
}
