import { EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { openSession } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';

export interface OpenOptions {
  server?: string;
  json?: boolean;
  browser?: boolean;
}

/**
 * `till checkouts open ID`: prints the checkout's hosted payment page and opens it in the browser (not with
 * --no-browser or --json). An expired or paid checkout is said so, the URL printed all the same.
 */
export async function openCheckout(id: string, options: OpenOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const checkout = await session.api.request<ApiObject>('GET', `/v1/checkouts/${encodeURIComponent(id)}`);
  const url = String(checkout.url);
  const status = String(checkout.status);
  let opened = false;
  if (options.browser !== false && !options.json && status === 'open') {
    const { openBrowser } = await import('../../browser.js');
    opened = await openBrowser(url);
  }
  session.out.result({ id: checkout.id, status, url, expires_at: checkout.expires_at, opened }, (style) =>
    [
      url,
      status === 'open'
        ? style.dim(opened ? 'Opened in your browser. Sandbox cards: 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined.' : 'Open this URL to pay.')
        : style.yellow(`This checkout is ${status}: the page shows it, but it cannot be paid.`),
    ].join('\n'),
  );
  return EXIT.ok;
}
