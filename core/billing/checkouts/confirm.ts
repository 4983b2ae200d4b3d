import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import type { ChargeOutcome, DeclineCode, PaymentMethodInput, SavedPaymentMethod } from '../../payments/processor.js';
import { recordPayment } from '../../payments/repository.js';
import { claimRedemption, findDiscount } from '../discounts/repository.js';
import { customFieldDataIssues, type Issue } from './custom-field-data.js';
import { fulfillCheckout } from './fulfill.js';
import { discountProblem, invalid, issue } from './pricing.js';
import { findCheckoutByClientSecret, transitionCheckout } from './repository.js';
import { releaseRedemption } from '../discounts/repository.js';
import type { Checkout, CheckoutConfirm, CheckoutUpdatePublic } from './schema.js';
import { billingAddressFields, checkoutFlags } from './serialize.js';
import { announceCheckout, applyPublicUpdate, assertOpen, checkoutNotFound, type CheckoutDeps } from './service.js';
import { viewOf } from './view.js';

const UPDATE_FIELDS = [
  'product_id', 'product_price_id', 'amount', 'customer_name', 'customer_email', 'customer_billing_name', 'customer_billing_address',
  'customer_tax_id', 'is_business_customer', 'locale', 'discount_code', 'allow_trial', 'custom_field_data',
] as const;

/** What must be filled before paying: the email, the billing address the form asks for, the required custom fields. */
function completenessIssues(checkout: Checkout): Issue[] {
  const issues: Issue[] = [];
  if (!checkout.customerEmail) issues.push(issue(['customer_email'], 'Field required', 'missing'));
  const flags = checkoutFlags(checkout);
  if (flags.isPaymentFormRequired || checkout.requireBillingAddress) {
    const address = checkout.customerBillingAddress as Record<string, string | null> | null;
    for (const [field, mode] of Object.entries(billingAddressFields(checkout))) {
      if (mode === 'required' && !address?.[field]) issues.push(issue(['customer_billing_address', field], 'Field required', 'missing'));
    }
  }
  issues.push(...customFieldDataIssues(checkout.product.attachedCustomFields, checkout.customFieldData, { complete: true }));
  return issues;
}

const declined = (message: string, declineCode: string) => new CoreError('payment_failed', 'CHECKOUT_PAYMENT_DECLINED', message, { decline_code: declineCode });

/**
 * Pays and delivers a checkout. In order: apply the last changes and check the form is complete; set up the
 * card (or test token) with the processor; claim the checkout (open → confirmed, one guarded UPDATE) and the
 * discount's redemption in one transaction, so nothing is charged without a redemption; charge; then fulfil in
 * one transaction. A decline puts the checkout back to open (another card may be tried), gives the redemption
 * back and records the failed payment; it answers CHECKOUT_PAYMENT_DECLINED with the processor's message.
 */
export async function confirmCheckout(deps: CheckoutDeps, clientSecret: string, input: CheckoutConfirm, options: { paymentMethod?: PaymentMethodInput } = {}): Promise<Checkout> {
  const { db, payments } = deps;

  // 1. The last update and the completeness check (an incomplete form changes nothing).
  const { checkout, clock } = await db.transaction(async (trx) => {
    const stored = await findCheckoutByClientSecret(trx, clientSecret, { forUpdate: true });
    if (!stored) throw checkoutNotFound();
    const clock = await organizationClock(trx, deps.clock, stored.organizationId);
    assertOpen(stored, clock.now());
    const update: CheckoutUpdatePublic = Object.fromEntries(UPDATE_FIELDS.filter((field) => input[field] !== undefined).map((field) => [field, input[field]]));
    const checkout = Object.keys(update).length ? await applyPublicUpdate(trx, deps, clock, stored, update) : await viewOf(trx, stored, clock.now());
    const issues = completenessIssues(checkout);
    const flags = checkoutFlags(checkout);
    if (flags.isPaymentFormRequired && !options.paymentMethod && !input.confirmation_token_id) {
      issues.push(issue(['confirmation_token_id'], 'A payment method is required: fill in the card form, or pass a test token such as tok_visa.', 'missing'));
    }
    if (issues.length) throw invalid(issues);
    return { checkout, clock };
  });
  const flags = checkoutFlags(checkout);

  // 2. The payment method (a malformed card is refused before anything changes).
  let method: SavedPaymentMethod | null = null;
  if (flags.isPaymentFormRequired) {
    method = await payments.setupPaymentMethod(options.paymentMethod ?? { kind: 'token', token: input.confirmation_token_id! });
  }

  // 3. Claim the checkout and the discount redemption together.
  await db.transaction(async (trx) => {
    const now = clock.now();
    const claim = { modifiedAt: now, discountClaimed: checkout.discountId !== null };
    if (!(await transitionCheckout(trx, checkout.id, 'open', 'confirmed', claim, { totalAmount: checkout.amounts.totalAmount, currency: checkout.currency, productPriceId: checkout.productPriceId, discountId: checkout.discountId }))) {
      const current = (await findCheckoutByClientSecret(trx, clientSecret))!;
      if (current.status === 'open' && now < current.expiresAt) {
        // Repriced by another request since step 1: charging the amounts read there would be wrong.
        throw new CoreError('conflict', 'CHECKOUT_CHANGED', 'The checkout changed while it was being confirmed. Review it and confirm again.');
      }
      assertOpen(current, now);
      throw new CoreError('forbidden', 'CHECKOUT_NOT_OPEN', 'This checkout is being confirmed by another request.');
    }
    if (checkout.discountId) {
      const discount = await findDiscount(trx, checkout.discountId, [checkout.organizationId]);
      const problem = discount ? discountProblem({ ...discount, redemptionsCount: 0 }, { now, productId: checkout.productId, currency: checkout.currency, price: checkout.productPrice }) : 'This discount no longer exists.';
      if (problem) throw invalid([issue(['discount_code'], `${problem} Remove it to pay without it.`)]);
      if (!(await claimRedemption(trx, checkout.discountId))) {
        throw invalid([issue(['discount_code'], 'This discount has been fully redeemed. Remove it to pay without it.')]);
      }
    }
    await announceCheckout(trx, clock, deps.baseUrl, { ...checkout, status: 'confirmed', discountClaimed: checkout.discountId !== null, modifiedAt: now }, 'checkout.updated');
  });

  // 4. Charge (nothing when free or in a trial).
  const processor = payments.name;
  let outcome: ChargeOutcome | null = null;
  const amount = checkout.amounts.totalAmount;
  try {
    if (flags.isPaymentRequired) {
      outcome = await payments.charge({
        processorMethodId: method!.processorMethodId,
        amount,
        currency: checkout.currency,
        idempotencyKey: `checkout:${checkout.id}:${newId()}`,
        description: `${checkout.organization.name}: ${checkout.product.name}`,
        offSession: false,
      });
    }
  } catch (error) {
    await reopen(deps, clock, checkout, null);
    throw error;
  }
  if (outcome?.status === 'failed') {
    await reopen(deps, clock, checkout, { method: method!, amount, declineCode: outcome.declineCode, message: outcome.message, processor });
    throw declined(outcome.message, outcome.declineCode);
  }

  // 5. Deliver, in one transaction; if that fails, the money goes back.
  const charge = outcome?.status === 'succeeded' ? { processorPaymentId: outcome.processorPaymentId, amount } : null;
  try {
    return await db.transaction((trx) => fulfillCheckout(trx, clock, deps.baseUrl, { ...checkout, status: 'confirmed' }, { processor, method, charge }));
  } catch (error) {
    if (charge) await payments.refund({ processorPaymentId: charge.processorPaymentId, amount, currency: checkout.currency, idempotencyKey: `checkout-failed:${checkout.id}` });
    await db.transaction(async (trx) => {
      const now = clock.now();
      if (await transitionCheckout(trx, checkout.id, 'confirmed', 'failed', { modifiedAt: now, discountClaimed: false })) {
        if (checkout.discountId) await releaseRedemption(trx, checkout.discountId);
        await announceCheckout(trx, clock, deps.baseUrl, { ...checkout, status: 'failed', discountClaimed: false, modifiedAt: now }, 'checkout.updated');
      }
    });
    throw error;
  }
}

/** After a decline: the failed payment recorded, the redemption given back, the checkout open for another card. */
async function reopen(
  deps: CheckoutDeps,
  clock: Clock,
  checkout: Checkout,
  failure: { method: SavedPaymentMethod; amount: number; declineCode: DeclineCode; message: string; processor: string } | null,
): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const now = clock.now();
    if (failure) {
      await recordPayment(trx, {
        organizationId: checkout.organizationId,
        customerId: checkout.customerId,
        checkoutId: checkout.id,
        processor: failure.processor,
        processorPaymentId: null,
        amount: failure.amount,
        currency: checkout.currency,
        status: 'failed',
        methodBrand: failure.method.brand,
        methodLast4: failure.method.last4,
        declineCode: failure.declineCode,
        declineMessage: failure.message,
        createdAt: now,
      });
    }
    if (await transitionCheckout(trx, checkout.id, 'confirmed', 'open', { modifiedAt: now, discountClaimed: false })) {
      if (checkout.discountId) await releaseRedemption(trx, checkout.discountId);
      await announceCheckout(trx, clock, deps.baseUrl, await viewOf(trx, { ...checkout, status: 'open', discountClaimed: false, modifiedAt: now }, now), 'checkout.updated');
    }
  });
}
