import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { scheduleJob } from '../../jobs/jobs.js';
import type { PaymentMethodInput, SavedPaymentMethod } from '../../payments/processor.js';
import { insertPayment } from '../../payments/repository.js';
import { processorFor, processorForCharge } from '../../payments/select.js';
import { intentRequest, PAYMENT_SETTLE_DELAY_MS, PAYMENT_SETTLE_JOB } from '../payments/intents.js';
import { settleIntent } from '../payments/settle.js';
import { claimRedemption, findDiscount } from '../discounts/repository.js';
import { customFieldDataIssues, type Issue } from './custom-field-data.js';
import { fulfillCheckout } from './fulfill.js';
import { discountProblem, invalid, issue } from './pricing.js';
import { findCheckoutById, findCheckoutByClientSecret, transitionCheckout } from './repository.js';
import type { Checkout, CheckoutConfirm, CheckoutUpdatePublic } from './schema.js';
import { billingAddressFields, checkoutFlags, checkoutUrl } from './serialize.js';
import { announceCheckout, applyPublicUpdate, assertOpen, checkoutNotFound, type CheckoutDeps } from './service.js';
import { viewOf } from './view.js';
import { assertCheckoutRules, holdCheckoutCustomer } from './subscription-rules.js';

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
 * card (or token) with the processor; then ONE transaction claims the checkout (open → confirmed, one guarded
 * UPDATE), the discount's redemption and, when money is due, writes the payment intent with its idempotency key
 * and the settle job that finishes it should this request never hear back. Only then is the processor asked.
 * Its answer settles the intent (core/billing/payments/settle.ts): paid, the checkout is fulfilled; declined, it
 * is open again for another card, its redemption given back, and this answers CHECKOUT_PAYMENT_DECLINED;
 * waiting for 3-D Secure or for the bank, the checkout stays confirmed and is answered as such (the hosted page
 * sends the customer to the intent's redirect URL, or waits). A checkout that charges nothing is fulfilled in
 * the claim's transaction.
 */
export async function confirmCheckout(deps: CheckoutDeps, clientSecret: string, input: CheckoutConfirm, options: { paymentMethod?: PaymentMethodInput } = {}): Promise<Checkout> {
  const { db } = deps;

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
    await assertCheckoutRules(trx, checkout);
    return { checkout, clock };
  });
  const flags = checkoutFlags(checkout);
  // A card to charge or save needs a processor that takes this organization's money (409 when there is none).
  const payments = flags.isPaymentFormRequired ? await processorForCharge(db, deps, checkout.organizationId) : await processorFor(db, deps, checkout.organizationId);

  // 2. The payment method (a malformed card is refused before anything changes).
  let method: SavedPaymentMethod | null = null;
  if (flags.isPaymentFormRequired) {
    const payer = { email: checkout.customerEmail!, name: checkout.customerName, processorCustomerId: null };
    method = await payments.setupPaymentMethod(options.paymentMethod ?? { kind: 'token', token: input.confirmation_token_id! }, payer);
    // Nothing charged now (a trial): the card is saved for the renewals without a charge (Stripe: a SetupIntent).
    if (!flags.isPaymentRequired && payments.saveForLater) {
      const saved = await payments.saveForLater(method, { idempotencyKey: `till_setup_${checkout.id}_${method.processorMethodId}`, description: `${checkout.organization.name}: ${checkout.product.name}` });
      if (saved.status === 'failed') throw declined(saved.message, saved.declineCode);
      method = saved.method;
    }
  }

  // 3. Claim the checkout, the discount redemption and the payment intent together, the rules checked again with
  // the customer held (another checkout of theirs may have been claimed since step 1).
  const claimed = await db.transaction(async (trx) => {
    const now = clock.now();
    await holdCheckoutCustomer(trx, checkout);
    await assertCheckoutRules(trx, checkout);
    const payment = flags.isPaymentRequired
      ? await insertPayment(trx, {
          organizationId: checkout.organizationId,
          customerId: checkout.customerId,
          checkoutId: checkout.id,
          orderId: null,
          subscriptionId: null,
          purpose: 'checkout',
          attempt: null,
          processor: payments.name,
          processorMethodId: method!.processorMethodId,
          processorCustomerId: method!.processorCustomerId,
          amount: checkout.amounts.totalAmount,
          currency: checkout.currency,
          offSession: false,
          description: `${checkout.organization.name}: ${checkout.product.name}`,
          returnUrl: checkoutUrl(deps.baseUrl, checkout.clientSecret),
          methodBrand: method!.brand,
          methodLast4: method!.last4,
          methodExpMonth: method!.expMonth,
          methodExpYear: method!.expYear,
          plan: null,
          createdAt: now,
        })
      : null;
    const claim = { modifiedAt: now, discountClaimed: checkout.discountId !== null, paymentId: payment?.id ?? null };
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
    const confirmed: Checkout = { ...checkout, status: 'confirmed', discountClaimed: checkout.discountId !== null, paymentId: payment?.id ?? null, modifiedAt: now };
    await announceCheckout(trx, clock, deps.baseUrl, confirmed, 'checkout.updated');
    // Nothing to charge (free, or a trial): delivered in this same transaction.
    if (!payment) return { done: await fulfillCheckout(trx, clock, deps.baseUrl, confirmed, { processor: payments.name, payment: null, method }), payment: null };
    await scheduleJob(trx, { organizationId: payment.organizationId, kind: PAYMENT_SETTLE_JOB, subjectId: payment.id, runAt: new Date(now.getTime() + PAYMENT_SETTLE_DELAY_MS) });
    return { done: null, payment };
  });
  if (!claimed.payment) return claimed.done!;

  // 4. Ask the processor. Should it fail to answer, the intent stays as written and the settle job finishes it.
  const outcome = await payments.createIntent(intentRequest(claimed.payment));
  const payment = await settleIntent({ ...deps, clock }, claimed.payment.id, outcome);
  if (payment.status === 'failed') throw declined(payment.declineMessage ?? 'Your card was declined.', payment.declineCode ?? 'card_declined');
  const stored = (await findCheckoutById(db, checkout.id))!;
  return viewOf(db, stored, clock.now());
}
