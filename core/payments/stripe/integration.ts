import type Stripe from 'stripe';
import type { ProcessorDispute } from '../../billing/disputes/service.js';
import type { PaymentProcessor } from '../processor.js';
import { createStripeProcessor, stripeClient, type StripeSettings } from './processor.js';
import { processorDisputeOf } from './webhook.js';

/** Stripe as tilld is configured with it (TILL_STRIPE_*): the processor, its webhook secret, and what pages show. */
export interface StripeIntegration {
  client: Stripe;
  processor: PaymentProcessor;
  publishableKey: string;
  webhookSecret: string;
  /** True for Stripe's test mode keys (`sk_test_…`, `rk_test_…`): no real money moves. */
  testMode: boolean;
  /** Concedes a dispute at Stripe (it closes as lost); answers the dispute as Stripe now has it. */
  closeDispute(processorDisputeId: string): Promise<ProcessorDispute>;
}

export function createStripeIntegration(settings: StripeSettings & { publishableKey: string; webhookSecret: string }): StripeIntegration {
  const client = stripeClient(settings);
  return {
    client,
    processor: createStripeProcessor(settings),
    publishableKey: settings.publishableKey,
    webhookSecret: settings.webhookSecret,
    testMode: /^(sk|rk)_test_/.test(settings.secretKey),
    closeDispute: async (id) => processorDisputeOf(await client.disputes.close(id)),
  };
}
