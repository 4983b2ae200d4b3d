import type { Executor } from '../db/database.js';
import { CoreError } from '../errors.js';
import { clockState } from '../jobs/clock.js';
import type { PaymentProcessor } from './processor.js';

/** The processors a daemon holds: the sandbox always, a live one (Stripe) when it is configured. */
export interface ProcessorChoice {
  /** The sandbox: the processor of organizations marked sandbox (and of every organization, see `liveRequired`). */
  payments: PaymentProcessor;
  /** Stripe, when TILL_STRIPE_* is set: the processor of every organization not marked sandbox. */
  livePayments?: PaymentProcessor | null;
  /**
   * True in tilld (unless TILL_SANDBOX_ONLY): an organization not marked sandbox takes money through the live
   * processor only, so without one its paid checkouts are refused. False or absent, the sandbox stands in for a
   * live processor that is not configured (a server that never takes real money, and tests that need no Stripe).
   */
  liveRequired?: boolean;
}

/**
 * How an organization takes money: `sandbox` (test cards, no money moves), `live` (through the live processor),
 * or `not_configured` (it is not a sandbox and this server has no live processor: it cannot be paid).
 */
export type PaymentMode = 'sandbox' | 'live' | 'not_configured';

export async function paymentModeOf(db: Executor, choice: Pick<ProcessorChoice, 'livePayments' | 'liveRequired'>, organizationId: string): Promise<PaymentMode> {
  if (!choice.livePayments && !choice.liveRequired) return 'sandbox';
  if ((await clockState(db, organizationId)).sandbox) return 'sandbox';
  return choice.livePayments ? 'live' : 'not_configured';
}

/**
 * Which processor takes an organization's money: organizations marked sandbox keep the sandbox, the others go
 * live. For work on money already taken (settling, refunds), the sandbox answers when no live processor is
 * configured; a new charge asks `processorForCharge`, which refuses instead.
 */
export async function processorFor(db: Executor, choice: ProcessorChoice, organizationId: string): Promise<PaymentProcessor> {
  if (!choice.livePayments) return choice.payments;
  return (await clockState(db, organizationId)).sandbox ? choice.payments : choice.livePayments;
}

export const paymentsNotConfigured = () =>
  new CoreError(
    'conflict',
    'PAYMENTS_NOT_CONFIGURED',
    'This seller cannot take payments yet: the organization is not marked sandbox and Stripe is not configured on this Till server (set TILL_STRIPE_SECRET_KEY, TILL_STRIPE_PUBLISHABLE_KEY and TILL_STRIPE_WEBHOOK_SECRET, or mark the organization sandbox to take test payments: `till clock sandbox on`).',
  );

/** The processor for a new charge or a card to save; refuses (409 PAYMENTS_NOT_CONFIGURED) when the organization cannot be paid. */
export async function processorForCharge(db: Executor, choice: ProcessorChoice, organizationId: string): Promise<PaymentProcessor> {
  if ((await paymentModeOf(db, choice, organizationId)) === 'not_configured') throw paymentsNotConfigured();
  return processorFor(db, choice, organizationId);
}
