import type { Payment, PaymentMethod } from '../../payments/repository.js';

/** Polar's three payment statuses: an intent still waiting for the processor is `pending`. */
const wireStatus = (payment: Payment) => (payment.status === 'succeeded' || payment.status === 'failed' ? payment.status : 'pending');

/** What started the attempt, in Polar's words (an invoiced plan change has no word there). */
function triggerOf(payment: Payment) {
  if (payment.purpose === 'checkout') return 'purchase';
  if (payment.purpose === 'subscription') return payment.attempt ? 'retry_dunning' : 'subscription_cycle';
  return null;
}

/**
 * The Payment of Polar's API (CardPayment, or GenericPayment when no method was there to charge). Polar's
 * `processor` enum knows only `stripe`; Till's own processor name (`sandbox` or `stripe`) and the intent's finer
 * status are in `processor_metadata`, with the 3-D Secure URL while the customer has to act.
 */
export function serializePayment(payment: Payment) {
  const base = {
    created_at: payment.createdAt.toISOString(),
    modified_at: payment.modifiedAt?.toISOString() ?? null,
    id: payment.id,
    processor: 'stripe' as const,
    status: wireStatus(payment),
    amount: payment.amount,
    currency: payment.currency,
    trigger: triggerOf(payment),
    decline_reason: payment.declineCode,
    decline_message: payment.declineMessage,
    organization_id: payment.organizationId,
    checkout_id: payment.checkoutId,
    order_id: payment.orderId,
    processor_metadata: {
      processor: payment.processor,
      intent_status: payment.status,
      ...(payment.processorPaymentId ? { intent_id: payment.processorPaymentId } : {}),
      ...(payment.status === 'requires_action' && payment.redirectUrl ? { redirect_url: payment.redirectUrl } : {}),
    },
  };
  if (!payment.methodBrand || !payment.methodLast4) return { ...base, method: 'unknown' };
  return { ...base, method: 'card' as const, method_metadata: { brand: payment.methodBrand, last4: payment.methodLast4 } };
}

/**
 * The PaymentMethod of Polar's API (customers.listPaymentMethods): brand, last four and expiry, nothing else.
 * A method saved without an expiry (before Till kept it) is a generic one. The default is the newest, the one
 * renewals charge when the subscription names none.
 */
export function serializePaymentMethod(method: PaymentMethod, isDefault: boolean) {
  // Polar's processor enum knows only `stripe` (see serializePayment).
  const base = { id: method.id, created_at: method.createdAt.toISOString(), modified_at: null, processor: 'stripe' as const, customer_id: method.customerId, is_default: isDefault };
  if (method.expMonth === null || method.expYear === null) return { ...base, type: 'card' };
  return { ...base, type: 'card' as const, method_metadata: { brand: method.brand, last4: method.last4, exp_month: method.expMonth, exp_year: method.expYear, wallet: null } };
}
