import type { Executor } from '../core/db/database.js';
import { paymentModeOf } from '../core/payments/select.js';
import type { StripeIntegration } from '../core/payments/stripe/integration.js';

/**
 * How an organization takes money, as `till status`, the API and the hosted checkout say it: `sandbox` (test
 * cards, no money moves), `stripe_live` or `stripe_test` (Stripe, by the kind of secret key tilld has), or
 * `not_configured` (not a sandbox, and no Stripe: paid checkouts are refused).
 */
export type PaymentModeName = 'sandbox' | 'stripe_live' | 'stripe_test' | 'not_configured';

export async function organizationPaymentMode(
  deps: { db: Executor; stripe?: StripeIntegration | null; liveRequired?: boolean },
  organizationId: string,
): Promise<PaymentModeName> {
  const mode = await paymentModeOf(deps.db, { livePayments: deps.stripe?.processor ?? null, liveRequired: deps.liveRequired }, organizationId);
  if (mode !== 'live') return mode;
  return deps.stripe?.testMode ? 'stripe_test' : 'stripe_live';
}
