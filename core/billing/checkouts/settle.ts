import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import type { Payment } from '../../payments/repository.js';
import { releaseRedemption } from '../discounts/repository.js';
import { fulfillCheckout } from './fulfill.js';
import { findCheckoutById, transitionCheckout } from './repository.js';
import type { StoredCheckout } from './schema.js';
import { announceCheckout } from './service.js';
import { viewOf } from './view.js';

/** The checkout a payment was claimed for, if it is still waiting for that payment. */
async function waitingCheckout(trx: Knex.Transaction, payment: Payment): Promise<StoredCheckout | undefined> {
  const stored = payment.checkoutId ? await findCheckoutById(trx, payment.checkoutId) : undefined;
  return stored && stored.status === 'confirmed' && stored.paymentId === payment.id ? stored : undefined;
}

/**
 * Finishes a checkout whose intent settled, in the settling transaction: paid, it is fulfilled (customer, saved
 * method, subscription, order, benefits, succeeded); declined or abandoned, it goes back to open for another card
 * and its discount redemption is released. A payment whose checkout no longer waits for it (it cannot happen
 * while only settlement moves a confirmed checkout) gives its money back. `clock` is the organization's.
 */
export async function finishCheckoutPayment(trx: Knex.Transaction, clock: Clock, baseUrl: string, payment: Payment): Promise<{ giveBack: boolean }> {
  const stored = await waitingCheckout(trx, payment);
  if (!stored) return { giveBack: payment.status === 'succeeded' };
  const now = clock.now();
  const checkout = await viewOf(trx, stored, now);
  if (payment.status === 'succeeded') {
    await fulfillCheckout(trx, clock, baseUrl, checkout, { processor: payment.processor, payment });
    return { giveBack: false };
  }
  if (await transitionCheckout(trx, stored.id, 'confirmed', 'open', { modifiedAt: now, discountClaimed: false, paymentId: null })) {
    if (stored.discountId) await releaseRedemption(trx, stored.discountId);
    await announceCheckout(trx, clock, baseUrl, await viewOf(trx, { ...stored, status: 'open', discountClaimed: false, paymentId: null, modifiedAt: now }, now), 'checkout.updated');
  }
  return { giveBack: false };
}

/** A captured payment whose delivery failed: the checkout fails (confirmed → failed) and its redemption is released. */
export async function abandonCheckoutPayment(trx: Knex.Transaction, clock: Clock, baseUrl: string, payment: Payment): Promise<void> {
  const stored = await waitingCheckout(trx, payment);
  if (!stored) return;
  const now = clock.now();
  if (await transitionCheckout(trx, stored.id, 'confirmed', 'failed', { modifiedAt: now, discountClaimed: false })) {
    if (stored.discountId) await releaseRedemption(trx, stored.discountId);
    await announceCheckout(trx, clock, baseUrl, await viewOf(trx, { ...stored, status: 'failed', discountClaimed: false, modifiedAt: now }, now), 'checkout.updated');
  }
}
