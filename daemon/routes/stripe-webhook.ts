import express, { Router } from 'express';
import { CoreError } from '../../core/errors.js';
import { handleStripeWebhook } from '../../core/payments/stripe/webhook.js';
import type { V1Deps } from '../http/v1/deps.js';

/** Where Stripe delivers its events (set as the endpoint URL in Stripe's dashboard). */
export const STRIPE_WEBHOOK_PATH = '/v1/integrations/stripe/webhook';

/**
 * `POST /v1/integrations/stripe/webhook`: Stripe's events. The raw body is kept (Stripe signs the exact bytes), so
 * this router is mounted before the JSON parser. 2xx tells Stripe to stop retrying; a 400 is a delivery Till will
 * never accept (bad signature, too old); anything else, Stripe retries.
 */
export function stripeWebhookRouter(deps: V1Deps & { baseUrl: string }): Router {
  const router = Router();
  router.post(STRIPE_WEBHOOK_PATH, express.raw({ type: () => true, limit: '1mb' }), async (req, res, next) => {
    try {
      const stripe = deps.stripe;
      if (!stripe) throw new CoreError('not_found', 'STRIPE_NOT_CONFIGURED', 'Stripe is not configured on this daemon (TILL_STRIPE_SECRET_KEY, TILL_STRIPE_WEBHOOK_SECRET)');
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const signature = req.header('stripe-signature');
      const result = await handleStripeWebhook(
        { db: deps.db, clock: deps.clock, baseUrl: deps.baseUrl, payments: stripe.processor, stripe: stripe.client, webhookSecret: stripe.webhookSecret },
        body,
        signature,
      );
      res.json({ received: true, duplicate: result.duplicate, type: result.type });
    } catch (error) {
      next(error);
    }
  });
  return router;
}
