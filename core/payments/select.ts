import type { Executor } from '../db/database.js';
import { clockState } from '../jobs/clock.js';
import type { PaymentProcessor } from './processor.js';

/** The processors a daemon holds: the sandbox always, a live one (Stripe) when it is configured. */
export interface ProcessorChoice {
  /** The sandbox: every organization's processor when no live one is configured, sandbox organizations' always. */
  payments: PaymentProcessor;
  /** Stripe, when TILL_STRIPE_* is set: the processor of every organization not marked sandbox. */
  livePayments?: PaymentProcessor | null;
}

/** Which processor takes an organization's money: organizations marked sandbox keep the sandbox, the others go live. */
export async function processorFor(db: Executor, choice: ProcessorChoice, organizationId: string): Promise<PaymentProcessor> {
  if (!choice.livePayments) return choice.payments;
  return (await clockState(db, organizationId)).sandbox ? choice.payments : choice.livePayments;
}
