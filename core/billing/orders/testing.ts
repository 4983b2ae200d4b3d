import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { PaymentProcessor } from '../../payments/processor.js';
import { insertPayment, linkPayment, transitionPayment, type Payment } from '../../payments/repository.js';
import { intentRequest, settlementOf } from '../payments/intents.js';
import { createOrder } from './service.js';

/**
 * Test set-up: an order paid through a processor the way checkout fulfilment records it (a real charge of a
 * saved sandbox card, the payment row, then the order in one transaction). For tests of what follows a
 * purchase (refunds, invoices, listings) without going through a checkout.
 */
export async function seedPaidOrder(
  db: Database,
  clock: Clock,
  payments: PaymentProcessor,
  input: {
    organizationId: string;
    customerId: string;
    productId?: string | null;
    productPriceId?: string | null;
    subscriptionId?: string | null;
    label?: string;
    amount: number;
    discountAmount?: number;
    taxAmount?: number;
    currency?: string;
    billingName?: string | null;
    billingAddress?: object | null;
    metadata?: Record<string, string | number | boolean>;
  },
): Promise<{ id: string; paymentId: string | null }> {
  const currency = input.currency ?? 'usd';
  const discountAmount = input.discountAmount ?? 0;
  const taxAmount = input.taxAmount ?? 0;
  const netAmount = input.amount - discountAmount;
  const totalAmount = netAmount + taxAmount;
  // The intent is written first and settled with the processor's answer, as a checkout does.
  let payment: Payment | null = null;
  if (totalAmount > 0) {
    const method = await payments.setupPaymentMethod({ kind: 'token', token: 'tok_visa' });
    const created = await db.transaction((trx) =>
      insertPayment(trx, {
        organizationId: input.organizationId,
        customerId: input.customerId,
        checkoutId: null,
        orderId: null,
        subscriptionId: null,
        purpose: 'checkout',
        attempt: null,
        processor: payments.name,
        processorMethodId: method.processorMethodId,
        processorCustomerId: method.processorCustomerId,
        amount: totalAmount,
        currency,
        offSession: false,
        description: 'test order',
        returnUrl: null,
        methodBrand: method.brand,
        methodLast4: method.last4,
        methodExpMonth: method.expMonth,
        methodExpYear: method.expYear,
        plan: null,
        createdAt: clock.now(),
      }),
    );
    const outcome = await payments.createIntent(intentRequest(created));
    if (outcome.status !== 'succeeded') throw new Error(`test charge did not succeed: ${outcome.status}`);
    const settled = { ...settlementOf(created, outcome, clock.now()) };
    await transitionPayment(db, created, settled);
    payment = { ...created, ...settled };
  }
  return db.transaction(async (trx) => {
    const order = await createOrder(trx, clock, {
      organizationId: input.organizationId,
      customerId: input.customerId,
      productId: input.productId ?? null,
      subscriptionId: input.subscriptionId ?? null,
      checkoutId: null,
      billingReason: input.subscriptionId ? 'subscription_create' : 'purchase',
      currency,
      items: [{ label: input.label ?? 'Test purchase', amount: input.amount, taxAmount, proration: false, productPriceId: input.productPriceId ?? null }],
      subtotalAmount: input.amount,
      discountAmount,
      discountId: null,
      netAmount,
      taxAmount,
      totalAmount,
      status: 'paid',
      paymentId: payment?.id ?? null,
      billingName: input.billingName ?? null,
      billingAddress: input.billingAddress ?? null,
      metadata: input.metadata ?? {},
      customFieldData: {},
    });
    if (payment) await linkPayment(trx, payment.id, { orderId: order.id });
    return { id: order.id, paymentId: payment?.id ?? null };
  });
}
