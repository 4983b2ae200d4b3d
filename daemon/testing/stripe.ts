import Stripe from 'stripe';
import { toDbTime } from '../../core/db/columns.js';
import { RENEW_JOB } from '../../core/billing/subscriptions/job-kinds.js';
import { startStripeFake, type StripeFake, type StripeFakeOptions } from '../../core/payments/stripe/fake.js';
import { STRIPE_WEBHOOK_PATH } from '../routes/stripe-webhook.js';
import { startTestDaemon, type TestDaemon } from './daemon.js';

/** A tilld configured with the Stripe fake (its keys, API base and webhook secret), and a client of the fake. */
export interface StripeTestbed {
  fake: StripeFake;
  /** The real `stripe` package pointed at the fake: test helpers (ConfirmationTokens) and checks of Stripe's side. */
  stripe: Stripe;
  daemon: TestDaemon;
  /** A ConfirmationToken for one of Stripe's test payment methods (`pm_card_visa`, …), as Stripe.js would make it. */
  token(paymentMethod: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the Stripe fake and a tilld that takes money through it (organizations not marked sandbox pay through
 * Stripe), with the fake's webhooks sent to tilld's Stripe endpoint. `env` adds tilld variables.
 */
export async function startStripeTestbed(env: Record<string, string> = {}, fakeOptions?: StripeFakeOptions): Promise<StripeTestbed> {
  const fake = await startStripeFake(fakeOptions);
  const stripe = new Stripe(fake.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
  let daemon: TestDaemon;
  try {
    daemon = await startTestDaemon({
      TILL_STRIPE_SECRET_KEY: fake.secretKey,
      TILL_STRIPE_PUBLISHABLE_KEY: fake.publishableKey,
      TILL_STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
      TILL_STRIPE_API_BASE: fake.url,
      ...env,
    });
  } catch (error) {
    await fake.close();
    throw error;
  }
  fake.setWebhookUrl(`${daemon.url}${STRIPE_WEBHOOK_PATH}`);
  return {
    fake,
    stripe,
    daemon,
    token: async (paymentMethod) => (await stripe.testHelpers.confirmationTokens.create({ payment_method: paymentMethod })).id,
    async close() {
      await daemon.close();
      await fake.close();
    },
  };
}

/** Polls until `read` answers something (the machine may be busy: never a fixed sleep); fails after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 40_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Brings a subscription's renewal forward to now: a Stripe organization (not a sandbox) has no test clock, so its
 * period end and renewal job are moved in the database; tilld's job runner then renews and charges it.
 */
export async function renewNow(daemon: TestDaemon, subscriptionId: string): Promise<void> {
  const now = new Date();
  await daemon.db('subscriptions').where({ id: subscriptionId }).update({ current_period_end: toDbTime(new Date(now.getTime() - 1000)) });
  const moved = await daemon.db('jobs').where({ kind: RENEW_JOB, subject_id: subscriptionId }).update({ run_at_ms: now.getTime() - 1000 });
  if (moved !== 1) throw new Error(`subscription ${subscriptionId} has no renewal job to bring forward`);
}
