import { CliError, EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { done as summarize } from '../../resources/item.js';
import { openSession } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { formatMoney } from '../../ui/record.js';

export interface ConfirmOptions {
  server?: string;
  json?: boolean;
  token?: string;
  email?: string;
  name?: string;
  country?: string;
}

const FLAG_OF: Record<string, string> = { confirmation_token_id: '--token', customer_email: '--email', customer_name: '--name', customer_billing_address: '--country' };

/**
 * `till checkouts confirm ID --token tok_visa`: pays a checkout the way a script does in sandbox mode, as the SDK's
 * `checkouts.clientConfirm` does — the customer's client call with a test confirmation token instead of a card form
 * (tok_visa pays; tok_chargeDeclined, tok_chargeDeclinedInsufficientFunds are declined; tok_chargeCustomerFail pays
 * now and declines renewals). A free checkout needs no token. Prints the confirmed checkout.
 */
export async function confirmCheckout(id: string, options: ConfirmOptions, env: Env, streams: Streams): Promise<number> {
  const body: Record<string, unknown> = {};
  if (options.token !== undefined) body.confirmation_token_id = options.token;
  if (options.email !== undefined) body.customer_email = options.email;
  if (options.name !== undefined) body.customer_name = options.name;
  if (options.country !== undefined) {
    const country = options.country.trim().toUpperCase();
    if (!/^[A-Z]{2}$/.test(country)) throw new CliError('INVALID_FLAG', `--country "${options.country}": expected a two-letter country code such as FR.`, EXIT.invalid);
    body.customer_billing_address = { country };
  }
  const session = await openSession(env, streams, options);
  const checkout = await session.api.request<ApiObject>('GET', `/v1/checkouts/${encodeURIComponent(id)}`);
  const confirmed = await session.api.request<ApiObject>('POST', `/v1/checkouts/client/${encodeURIComponent(String(checkout.client_secret))}/confirm`, {
    body,
    flagOf: (field) => FLAG_OF[field],
  });
  // Fulfilment (customer, order, subscription) is done by the time confirm answers; the seller's view shows them.
  const after = await session.api.request<ApiObject>('GET', `/v1/checkouts/${encodeURIComponent(id)}`);
  summarize(
    session,
    after,
    `Checkout ${id} ${String(after.status ?? confirmed.status)}: ${formatMoney(Number(after.total_amount), String(after.currency))}` +
      `${after.order_id ? `, order ${String(after.order_id)}` : ''}${after.subscription_id ? `, subscription ${String(after.subscription_id)}` : ''}.`,
  );
  return EXIT.ok;
}
