import type { ReactNode } from 'react';
import { STYLESHEET_PATH } from '../../stylesheet.js';
import { CHECKOUT_STYLESHEET_PATH } from '../../checkout/stylesheet.js';
import { PostButton } from '../../components/PostButton.js';
import { PORTAL_SCRIPT_PATH, PORTAL_STYLESHEET_PATH } from '../assets.js';

export interface PortalLayoutProps {
  /** The page's one heading, also its title. */
  title: string;
  /** The seller whose customers this portal serves, shown instead of Till's own header. */
  seller: string;
  /** The portal's path (/portal/{slug}); with `email`, the header offers sign-out. */
  base: string;
  email?: string;
  children: ReactNode;
}

/** The document around the portal pages: the seller's name, as on the hosted checkout; the customer is not a Till user. */
export function PortalLayout({ title, seller, base, email, children }: PortalLayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{`${title} · ${seller}`}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        <link rel="stylesheet" href={CHECKOUT_STYLESHEET_PATH} />
        <link rel="stylesheet" href={PORTAL_STYLESHEET_PATH} />
        <script src={PORTAL_SCRIPT_PATH} defer />
      </head>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="checkout-header">
          <a className="seller" href={base}>
            {seller}
          </a>
          {email ? (
            <nav className="portal-nav" aria-label="Account">
              <span className="who">{email}</span>
              <PostButton action={`${base}/sign-out`} label="Sign out" variant="link" />
            </nav>
          ) : null}
        </header>
        <main id="main" className="checkout portal">
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}
