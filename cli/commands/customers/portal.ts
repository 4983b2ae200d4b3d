import { EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { openSession } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';

export interface PortalOptions {
  server?: string;
  json?: boolean;
  external?: boolean;
  returnUrl?: string;
  browser?: boolean;
}

/**
 * `till customers portal ID` (or `--external EXTERNAL_ID`): opens a customer session (POST /v1/customer-sessions,
 * one hour) and prints its portal link; on a terminal it also opens the link in the browser (not with --no-browser
 * or --json). The link carries the session token: whoever holds it acts as the customer until it expires.
 */
export async function customerPortal(id: string, options: PortalOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const body = {
    ...(options.external ? { external_customer_id: id } : { customer_id: id }),
    ...(options.returnUrl ? { return_url: options.returnUrl } : {}),
  };
  const created = await session.api.request<ApiObject>('POST', '/v1/customer-sessions/', { body });
  const url = String(created.customer_portal_url);
  let opened = false;
  if (options.browser !== false && !session.out.json && session.out.interactive) {
    const { openBrowser } = await import('../../browser.js');
    opened = await openBrowser(url);
  }
  session.out.result({ customer_id: created.customer_id, customer_portal_url: url, expires_at: created.expires_at, opened }, (style) =>
    [url, style.dim(`${opened ? 'Opened in your browser. ' : ''}Valid until ${String(created.expires_at)}; whoever has this link acts as the customer until then.`)].join('\n'),
  );
  return EXIT.ok;
}
