import express, { type Express } from 'express';
import { Checkout, CustomerPortal, Webhooks } from '@polar-sh/express';
import type { WebhooksConfig } from '@polar-sh/adapter-utils';

export interface AppConfig {
  accessToken: string;
  successUrl: string;
  webhookSecret: string;
  onPayload: WebhooksConfig['onPayload'];
  onOrderPaid: WebhooksConfig['onOrderPaid'];
}

/**
 * A seller's Express app wired exactly as @polar-sh/express's README says: the Checkout handler at /checkout, the
 * CustomerPortal handler at /portal and the Webhooks handler at /polar/webhooks, on Polar's sandbox server.
 */
export function createApp(config: AppConfig): Express {
  const app = express();
  app.get('/checkout', Checkout({ accessToken: config.accessToken, successUrl: config.successUrl, server: 'sandbox' }));
  app.get(
    '/portal',
    CustomerPortal({
      accessToken: config.accessToken,
      // The app knows its signed-in user's Polar customer; here the test names it in the query.
      getCustomerId: async (req) => String(req.query.customerId ?? ''),
      server: 'sandbox',
    }),
  );
  app.use(express.json()).post('/polar/webhooks', Webhooks({ webhookSecret: config.webhookSecret, onPayload: config.onPayload, onOrderPaid: config.onOrderPaid }));
  return app;
}
