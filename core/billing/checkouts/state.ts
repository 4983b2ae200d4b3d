import type { CheckoutStatus } from './schema.js';

/**
 * Every status change a checkout may make. `confirmed` holds the checkout while its payment is being taken:
 * a decline sends it back to `open` (the customer may try another card), success to `succeeded`, and an
 * unrecoverable error after the charge to `failed`. Only an open checkout expires.
 */
export const CHECKOUT_TRANSITIONS: Readonly<Record<CheckoutStatus, readonly CheckoutStatus[]>> = {
  open: ['confirmed', 'expired'],
  confirmed: ['succeeded', 'open', 'failed'],
  succeeded: [],
  failed: [],
  expired: [],
};

export const canTransition = (from: CheckoutStatus, to: CheckoutStatus): boolean => CHECKOUT_TRANSITIONS[from].includes(to);
