import type { ReactNode } from 'react';
import { STYLESHEET_PATH } from '../stylesheet.js';
import type { SignedInUser } from '../session.js';
import { PostButton } from './PostButton.js';

export interface LayoutProps {
  /** The page's one heading, also its title. */
  title: string;
  /** Shown in the header with a sign-out button when someone is signed in. */
  user?: SignedInUser;
  /** Narrow column for the short forms. */
  narrow?: boolean;
  children: ReactNode;
}

/** The HTML document around every page: Till's header, one h1, the daemon's own stylesheet. */
export function Layout({ title, user, narrow, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Till`}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
      </head>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <a className="brand" href="/">
            Till
          </a>
          {user ? (
            <nav className="site-nav" aria-label="Account">
              <a href="/account">{user.email}</a>
              <PostButton action="/sign-out" label="Sign out" variant="link" />
            </nav>
          ) : null}
        </header>
        <main id="main" className={narrow ? 'narrow' : undefined}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}
