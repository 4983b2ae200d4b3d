import type { FakeState } from './state.js';

/** What every handler of the fake works with. */
export interface FakeContext {
  state: FakeState;
  now(): Date;
  /** The fake's own address, for the 3-D Secure page it sends customers to. */
  baseUrl: string;
  /** Records a Stripe event with a snapshot of `object`, and queues it for the webhook endpoint. */
  emit(type: string, object: unknown, previous?: Record<string, unknown>): void;
  /** Schedules a change Stripe makes "some time later" (a debit settling, a refund failing, a dispute closing). */
  later(change: () => void): void;
}
