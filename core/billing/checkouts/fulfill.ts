import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import { cancelJob } from '../../jobs/jobs.js';
import type { SavedPaymentMethod } from '../../payments/processor.js';
import { linkPayment, savePaymentMethod, type Payment } from '../../payments/repository.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { customerExternalIdSet } from '../../metering/customer-meters.js';
import { grantBenefits } from '../benefit-grants/service.js';
import { findCustomers, insertCustomer, listCustomers } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import { serializeCustomer } from '../customers/serialize.js';
import { createOrder } from '../orders/service.js';
import { createSubscription } from '../subscriptions/service.js';
import { isUniqueViolation } from '../../db/sql.js';
import { CHECKOUT_EXPIRY_JOB } from './job-kinds.js';
import { insertTrialRedemption, transitionCheckout } from './repository.js';
import { comparableEmail } from './subscription-rules.js';
import type { Checkout } from './schema.js';
import { announceCheckout } from './service.js';
import { viewOf } from './view.js';

/** The customer a checkout is for: the one it names, else the organization's customer with its external id or email, else a new one. */
async function customerOf(trx: Knex.Transaction, clock: Clock, checkout: Checkout): Promise<Customer> {
  const organizationIds = [checkout.organizationId];
  if (checkout.customerId) {
    const [named] = await findCustomers(trx, { id: checkout.customerId }, organizationIds);
    if (named) return named;
  }
  if (checkout.externalCustomerId) {
    const [byExternalId] = await findCustomers(trx, { externalId: checkout.externalCustomerId }, organizationIds);
    if (byExternalId) return byExternalId;
  }
  const email = checkout.customerEmail!;
  const byEmail = async () => (await listCustomers(trx, { organizationIds, email, metadata: {} }, [], { page: 1, limit: 1 })).items[0];
  const existing = await byEmail();
  if (existing) return existing;
  const customer: Customer = {
    id: newId(),
    organizationId: checkout.organizationId,
    externalId: checkout.externalCustomerId,
    email,
    emailVerified: false,
    name: checkout.customerName,
    billingName: checkout.customerBillingName,
    billingAddress: checkout.customerBillingAddress,
    taxId: null,
    locale: checkout.locale,
    metadata: checkout.customerMetadata,
    createdAt: clock.now(),
    modifiedAt: null,
    deletedAt: null,
  };
  try {
    // In a savepoint: a concurrent checkout creating the same customer first must not abort this transaction.
    await trx.transaction((savepoint) => insertCustomer(savepoint, customer));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await byEmail();
    if (winner) return winner;
    throw error;
  }
  // Events sent with the external id before the checkout count for the new customer.
  if (customer.externalId) await customerExternalIdSet(trx, clock, customer.organizationId, customer.id);
  await recordEvent(trx, clock, { organizationId: customer.organizationId, type: 'customer.created', data: serializeCustomer(customer) });
  return customer;
}

/**
 * What was taken from the customer before fulfilment: the succeeded intent (none when nothing was charged), or
 * for a checkout that charges nothing now (a trial) the method set up for the renewals.
 */
export interface Settlement {
  processor: string;
  payment: Payment | null;
  method?: SavedPaymentMethod | null;
}

/** The method to save for later charges: the one the processor saved from the charge, else the one it was charged with. */
function methodToSave(settlement: Settlement): SavedPaymentMethod | null {
  const { payment } = settlement;
  if (payment?.processorMethodId && payment.methodBrand && payment.methodLast4) {
    return {
      processorMethodId: payment.savedMethodId ?? payment.processorMethodId,
      processorCustomerId: payment.processorCustomerId,
      brand: payment.methodBrand,
      last4: payment.methodLast4,
      expMonth: payment.methodExpMonth,
      expYear: payment.methodExpYear,
    };
  }
  return settlement.method ?? null;
}

/**
 * Delivers a confirmed checkout whose payment succeeded, in the caller's ONE transaction: the customer, the saved
 * method, the payment linked, the subscription (recurring products) and the order, the benefits, then the checkout
 * succeeded (guarded: only from confirmed) with checkout.updated. `clock` is the organization's clock.
 */
export async function fulfillCheckout(trx: Knex.Transaction, clock: Clock, baseUrl: string, checkout: Checkout, settlement: Settlement): Promise<Checkout> {
  const now = clock.now();
  const customer = await customerOf(trx, clock, checkout);
  const toSave = methodToSave(settlement);
  const method = toSave
    ? await savePaymentMethod(trx, {
        organizationId: checkout.organizationId,
        customerId: customer.id,
        processor: settlement.processor,
        ...toSave,
        createdAt: now,
      })
    : null;
  const payment = settlement.payment;

  const { product, productPrice, amounts } = checkout;
  const trialing = checkout.trialEnd !== null;
  const subscription =
    product.recurringInterval !== null
      ? await createSubscription(trx, clock, {
          organizationId: checkout.organizationId,
          customerId: customer.id,
          productId: product.id,
          // The selected price, and the product's metered prices in the same currency (billed on usage).
          priceIds: [productPrice.id, ...product.prices.filter((p) => p.amountType === 'metered_unit' && p.priceCurrency === checkout.currency && p.id !== productPrice.id).map((p) => p.id)],
          amount: amounts.subtotalAmount,
          currency: checkout.currency,
          recurringInterval: product.recurringInterval,
          recurringIntervalCount: product.recurringIntervalCount ?? 1,
          discountId: checkout.discountId,
          checkoutId: checkout.id,
          paymentMethodId: method?.id ?? null,
          trialEnd: checkout.trialEnd,
          metadata: checkout.metadata,
          customFieldData: checkout.customFieldData,
          baseUrl,
        })
      : null;

  // A trial's first order charges nothing; its first paid period is the renewal at the trial's end.
  const charged = trialing ? { subtotalAmount: 0, discountAmount: 0, netAmount: 0, taxAmount: 0, totalAmount: 0 } : amounts;
  const order = await createOrder(trx, clock, {
    organizationId: checkout.organizationId,
    customerId: customer.id,
    productId: product.id,
    subscriptionId: subscription?.id ?? null,
    checkoutId: checkout.id,
    billingReason: subscription ? 'subscription_create' : 'purchase',
    currency: checkout.currency,
    items: [{ label: trialing ? `${product.name} (trial)` : product.name, amount: charged.subtotalAmount, taxAmount: charged.taxAmount, proration: false, productPriceId: productPrice.id }],
    subtotalAmount: charged.subtotalAmount,
    discountAmount: charged.discountAmount,
    discountId: trialing ? null : checkout.discountId,
    netAmount: charged.netAmount,
    taxAmount: charged.taxAmount,
    totalAmount: charged.totalAmount,
    status: 'paid',
    paymentId: payment?.id ?? null,
    billingName: checkout.customerBillingName ?? checkout.customerName,
    billingAddress: checkout.customerBillingAddress,
    metadata: checkout.metadata,
    customFieldData: checkout.customFieldData,
  });
  if (payment) await linkPayment(trx, payment.id, { orderId: order.id, customerId: customer.id });
  await grantBenefits(trx, clock, { organizationId: checkout.organizationId, customerId: customer.id, productId: product.id, orderId: order.id, subscriptionId: subscription?.id ?? null });
  // As Polar, every trial taken is remembered, whatever the setting: turning prevent_trial_abuse on later counts it.
  const email = customer.email ?? checkout.customerEmail;
  if (trialing && email) await insertTrialRedemption(trx, { id: newId(), organizationId: checkout.organizationId, customerId: customer.id, customerEmail: comparableEmail(email), productId: product.id, createdAt: now });

  const moved = await transitionCheckout(trx, checkout.id, 'confirmed', 'succeeded', {
    modifiedAt: now,
    customerId: customer.id,
    subscriptionId: subscription?.id ?? null,
    orderId: order.id,
    paymentId: payment?.id ?? null,
  });
  if (!moved) throw new Error(`checkout ${checkout.id} left confirmed during its fulfilment`);
  await cancelJob(trx, CHECKOUT_EXPIRY_JOB, checkout.id);
  const done = await viewOf(trx, { ...checkout, status: 'succeeded', customerId: customer.id, subscriptionId: subscription?.id ?? null, orderId: order.id, paymentId: payment?.id ?? null, modifiedAt: now }, now);
  await announceCheckout(trx, clock, baseUrl, done, 'checkout.updated');
  return done;
}
