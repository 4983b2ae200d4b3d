import { betterAuth } from 'better-auth';
import { memoryAdapter } from 'better-auth/adapters/memory';
import { toNodeHandler } from 'better-auth/node';
import { checkout, polar, portal, usage, webhooks } from '@polar-sh/better-auth';
import { Polar } from '@polar-sh/sdk';
import type { validateEvent } from '@polar-sh/sdk/webhooks';

type WebhookPayload = ReturnType<typeof validateEvent>;

export interface AppConfig {
  /** Where the app is served: Better Auth's base URL. */
  baseURL: string;
  /** Where Polar's API is: a tilld. */
  polarServerURL: string;
  accessToken: string;
  webhookSecret: string;
  proProductId: string;
  onPayload: (payload: WebhookPayload) => Promise<void>;
}

/**
 * A seller's Better Auth set-up as @polar-sh/better-auth's README says: the Polar client, and the polar plugin with
 * customer creation on sign-up, checkout (the `pro` slug), portal, usage and webhooks. The only difference from the
 * README is where the client points: `serverURL` (the SDK's own option) names the tilld instead of `server: 'sandbox'`.
 * Users live in Better Auth's memory adapter.
 */
export function createAuth(config: AppConfig) {
  const polarClient = new Polar({ accessToken: config.accessToken, serverURL: config.polarServerURL });
  const auth = betterAuth({
    baseURL: config.baseURL,
    secret: 'a-test-app-secret-of-at-least-32-characters',
    database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
    emailAndPassword: { enabled: true },
    plugins: [
      polar({
        client: polarClient,
        createCustomerOnSignUp: true,
        use: [
          checkout({ products: [{ productId: config.proProductId, slug: 'pro' }], successUrl: '/success?checkout_id={CHECKOUT_ID}', authenticatedUsersOnly: true }),
          portal(),
          usage(),
          webhooks({ secret: config.webhookSecret, onPayload: config.onPayload }),
        ],
      }),
    ],
  });
  return { auth, handler: toNodeHandler(auth) };
}
