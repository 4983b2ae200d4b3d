import type { Clock } from '../../clock.js';
import type { Database, Executor } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import { scheduleJob } from '../../jobs/jobs.js';
import type { PaymentMethodInput } from '../../payments/processor.js';
import { findPayment, insertPayment, paymentsOfOrder, setPaymentReturnUrl, unsettledPaymentsOfOrder, type Payment } from '../../payments/repository.js';
import { processorForCharge } from '../../payments/select.js';
import { customersByIds } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import { findOrder } from '../orders/repository.js';
import type { StoredOrder } from '../orders/schema.js';
import { findOrganization } from '../organizations/repository.js';
import { findProductsByIds } from '../products/repository.js';
import { intentRequest, PAYMENT_SETTLE_DELAY_MS, PAYMENT_SETTLE_JOB, type PaymentDeps } from '../payments/intents.js';
import { refreshIntent, settleIntent } from '../payments/settle.js';
import { methodOf } from '../subscriptions/charge.js';
import { findSubscription } from '../subscriptions/repository.js';
import type { Subscription } from '../subscriptions/schema.js';
import { isTerminal } from '../subscriptions/transitions.js';
import { hashPayLinkToken } from './mail.js';
import { isPayReturnKey, newPayReturnKey, payReturnUrl } from './return-url.js';
import { findPayLinkByTokenHash, findPayLinksOfOrder, type PayLink } from './repository.js';

/**
 * Where a link stands: `owed` (the page takes a card), `paid` (by this link or a dunning retry), `expired`, or
 * `closed` (the subscription ended, or no longer owes this order).
 */
export type PayLinkState = 'owed' | 'paid' | 'expired' | 'closed';

/** What the pay page shows. */
export interface PayLinkView {
  link: PayLink;
  state: PayLinkState;
  sellerName: string;
  productName: string;
  customer: Customer;
  order: StoredOrder;
  subscription: Subscription | undefined;
  /** The link's latest try, if any: waiting for the customer or the bank, or why it failed. */
  lastTry: Payment | undefined;
}

export interface PayLinkDeps extends PaymentDeps {
  /** True in tilld: an organization not marked sandbox pays through Stripe only (core/payments/select.ts). */
  liveRequired?: boolean;
}

const payLinkNotFound = () => new CoreError('not_found', 'PAY_LINK_NOT_FOUND', 'This payment link does not exist. Use the link from your most recent email.');

function stateOf(link: PayLink, order: StoredOrder, s: Subscription | undefined, now: Date): PayLinkState {
  if (order.status === 'paid') return 'paid';
  if (now.getTime() >= link.expiresAt.getTime()) return 'expired';
  if (!s || isTerminal(s.status) || s.dunningOrderId !== order.id || order.status !== 'pending') return 'closed';
  return 'owed';
}

/** Refuses, with a name, a link that cannot be paid now. */
function assertOwed(state: PayLinkState): void {
  if (state === 'paid') throw new CoreError('conflict', 'PAY_LINK_PAID', 'This payment has been made already; there is nothing left to pay.');
  if (state === 'expired') throw new CoreError('conflict', 'PAY_LINK_EXPIRED', 'This payment link has expired. A new one is emailed after the next attempt to charge your card.');
  if (state === 'closed') throw new CoreError('conflict', 'PAY_LINK_CLOSED', 'This subscription no longer waits for this payment.');
}

async function viewOf(db: Executor, baseClock: Clock, link: PayLink): Promise<PayLinkView> {
  const order = await findOrder(db, link.orderId, [link.organizationId]);
  const customer = (await customersByIds(db, [link.customerId])).get(link.customerId);
  if (!order || !customer) throw payLinkNotFound();
  const subscription = await findSubscription(db, link.subscriptionId, 'any');
  const organization = await findOrganization(db, link.organizationId);
  const [product] = subscription ? await findProductsByIds(db, [subscription.productId]) : [];
  const now = (await organizationClock(db, baseClock, link.organizationId)).now();
  return {
    link,
    state: stateOf(link, order, subscription, now),
    sellerName: organization?.name ?? 'Seller',
    productName: product?.name ?? 'Subscription',
    customer,
    order,
    subscription,
    lastTry: (await paymentsOfOrder(db, order.id, 'pay_link')).at(-1),
  };
}

/** The link a token opens, as the page shows it (PAY_LINK_NOT_FOUND for a token no link has). */
export async function openPayLink(db: Database, baseClock: Clock, token: string): Promise<PayLinkView> {
  const link = await findPayLinkByTokenHash(db, hashPayLinkToken(token));
  if (!link) throw payLinkNotFound();
  return viewOf(db, baseClock, link);
}

/**
 * Pays a link's owed order on-session with the card (sandbox) or processor token (Stripe) the customer gave. The
 * method is checked first (a malformed card changes nothing); then ONE transaction re-reads the subscription
 * (locked) and the order, refuses when another payment of the order is still waiting for the processor (a dunning
 * try, or this link pressed twice: never two charges for one order), and writes the intent (purpose `pay_link`,
 * no dunning attempt) with its settle job. The processor's answer settles it: paid, the order is paid and the
 * subscription active (finish.ts); declined, nothing changes and dunning goes on; 3-D Secure, the customer is sent
 * to the intent's redirect URL and comes back to `/pay/return/:paymentId?key=…` (return-url.ts). Answers the payment.
 */
export async function payWithLink(deps: PayLinkDeps, token: string, input: PaymentMethodInput): Promise<Payment> {
  const { db } = deps;
  const view = await openPayLink(db, deps.clock, token);
  assertOwed(view.state);
  const { link, customer } = view;
  const clock = await organizationClock(db, deps.clock, link.organizationId);
  const payments = await processorForCharge(db, deps, link.organizationId);
  const saved = view.subscription ? await methodOf(db, view.subscription) : undefined;
  const payer = { email: customer.email, name: customer.name, processorCustomerId: saved?.processor === payments.name ? saved.processorCustomerId : null };
  const method = await payments.setupPaymentMethod(input, payer);

  const payment = await db.transaction(async (trx) => {
    const s = await findSubscription(trx, link.subscriptionId, 'any', { forUpdate: true });
    const order = await findOrder(trx, link.orderId, [link.organizationId], { forUpdate: true });
    const now = clock.now();
    if (!order) throw payLinkNotFound();
    assertOwed(stateOf(link, order, s, now));
    if ((await unsettledPaymentsOfOrder(trx, order.id)).length > 0) {
      throw new CoreError('conflict', 'PAYMENT_IN_PROGRESS', 'A payment of this amount is being processed already. Wait a minute, then reload this page to see whether it went through.');
    }
    const created = await insertPayment(trx, {
      organizationId: link.organizationId,
      customerId: link.customerId,
      checkoutId: null,
      orderId: order.id,
      subscriptionId: link.subscriptionId,
      purpose: 'pay_link',
      attempt: null,
      processor: payments.name,
      processorMethodId: method.processorMethodId,
      processorCustomerId: method.processorCustomerId,
      amount: order.totalAmount,
      currency: order.currency,
      offSession: false,
      description: `${view.sellerName}: ${view.productName} (payment of an owed renewal)`,
      returnUrl: null,
      methodBrand: method.brand,
      methodLast4: method.last4,
      methodExpMonth: method.expMonth,
      methodExpYear: method.expYear,
      plan: null,
      createdAt: now,
    });
    // The return URL names the payment and a key of its own, not the link: the link's token is kept nowhere, not even in a URL at rest.
    const returnUrl = payReturnUrl(deps.baseUrl, created.id, newPayReturnKey());
    await setPaymentReturnUrl(trx, created.id, returnUrl);
    await scheduleJob(trx, { organizationId: created.organizationId, kind: PAYMENT_SETTLE_JOB, subjectId: created.id, runAt: new Date(now.getTime() + PAYMENT_SETTLE_DELAY_MS) });
    return { ...created, returnUrl };
  });
  // Should the processor not answer, the intent stays as written and the settle job finishes it.
  const outcome = await payments.createIntent(intentRequest(payment));
  return settleIntent({ ...deps, clock }, payment.id, outcome);
}

/** Asks the processor where a pay-link payment stands and settles it; the payment as it now is. */
async function refreshPayLinkPayment(deps: PayLinkDeps, found: Payment): Promise<Payment> {
  const clock = await organizationClock(deps.db, deps.clock, found.organizationId);
  return (await refreshIntent({ ...deps, clock }, found.id, { abandonIfWaiting: false }).catch(() => undefined)) ?? found;
}

/**
 * The link a token opens, after asking the processor about its latest try when that still waits (the sandbox sends
 * no events; Stripe's may be late): each refresh of the waiting page moves it on.
 */
export async function openPayLinkRefreshed(deps: PayLinkDeps, token: string): Promise<PayLinkView> {
  const view = await openPayLink(deps.db, deps.clock, token);
  const last = view.lastTry;
  if (!last || (last.status !== 'requires_action' && last.status !== 'processing' && last.status !== 'created')) return view;
  await refreshPayLinkPayment(deps, last);
  return openPayLink(deps.db, deps.clock, token);
}

/**
 * A pay-link payment as the customer comes back from authenticating at the processor: the processor is asked
 * where it stands (no need to wait for its event) and that is settled. Only pay-link payments, and only with the
 * key of the payment's return URL (what the processor brought the paying browser back with); undefined otherwise.
 */
export async function returnToPayLink(deps: PayLinkDeps, paymentId: string, key: unknown): Promise<{ payment: Payment; view: PayLinkView } | undefined> {
  const found = await findPayment(deps.db, paymentId);
  if (!found || found.purpose !== 'pay_link' || !found.orderId || !isPayReturnKey(found.returnUrl, key)) return undefined;
  const payment = await refreshPayLinkPayment(deps, found);
  const link = (await findPayLinksOfOrder(deps.db, found.orderId)).at(-1);
  if (!link) return undefined;
  return { payment, view: await viewOf(deps.db, deps.clock, link) };
}
