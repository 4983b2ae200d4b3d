import type { ReactNode } from 'react';
import type { PaymentModeName } from '../../../payment-mode.js';
import { STYLESHEET_PATH } from '../../stylesheet.js';
import { CHECKOUT_STYLESHEET_PATH } from '../stylesheet.js';

export interface CheckoutLayoutProps {
  /** The page's one heading, also its title. */
  title: string;
  /** The seller the customer is buying from, shown instead of Till's own header. */
  seller?: string;
  /** How the seller takes money; the sandbox and Stripe's test mode are shown as a badge (no real money moves). */
  mode?: PaymentModeName;
  /** Sends the browser on after a few seconds (the success URL); a link on the page does the same. */
  refreshTo?: { url: string; seconds: number };
  children: ReactNode;
}

/** The document around the checkout pages: the seller's name, not Till's navigation; the customer is not a Till user. */
export function CheckoutLayout({ title, seller, mode, refreshTo, children }: CheckoutLayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {/* A meta refresh, not a redirect: CSP form-action would stop a form post redirecting to another site. */}
        {refreshTo ? <meta httpEquiv="refresh" content={`${refreshTo.seconds}; url=${refreshTo.url}`} /> : null}
        <meta name="robots" content="noindex" />
        <title>{seller ? `${title} · ${seller}` : title}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        <link rel="stylesheet" href={CHECKOUT_STYLESHEET_PATH} />
      </head>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="checkout-header">
          <span className="seller">{seller ?? 'Checkout'}</span>
          {mode === 'sandbox' ? (
            <span className="mode" data-testid="mode-badge" title="Sandbox: test cards only, no real payment is made">
              Sandbox
            </span>
          ) : mode === 'stripe_test' ? (
            <span className="mode" data-testid="mode-badge" title="Stripe test mode: no real payment is made">
              Test mode
            </span>
          ) : null}
        </header>
        <main id="main" className="checkout">
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}
