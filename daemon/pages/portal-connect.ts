import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { AppDeps } from '../app.js';
import { systemClock } from '../../core/clock.js';
import { CoreError } from '../../core/errors.js';
import { authenticateCustomerSession } from '../../core/billing/customer-sessions/service.js';
import { CONNECT_STATE_TTL_MS, finishConnect, startConnect } from '../../core/billing/oauth-accounts/connect.js';
import { organizationIdBySlug } from '../../core/billing/oauth-accounts/repository.js';
import { OAUTH_PLATFORMS, type OAuthPlatform } from '../../core/billing/oauth-accounts/schema.js';

// Connecting a customer's GitHub or Discord account for a benefit from the customer portal: the start redirects to
// the platform's consent page, and the platform calls back here. Customers are recognised as on the portal's pages:
// the portal cookie (a customer session token), or the customer_session_token of a portal link, or a Bearer token.

/** The portal pages' cookie (a customer session token scoped to /portal/{slug}). */
const PORTAL_COOKIE = 'till_portal';
/** Binds a connection to the browser that started it: the callback must come back with it. */
const BROWSER_COOKIE = 'till_oauth_connect';
const CALLBACK_BASE = '/portal/oauth';

/** The callback URL to register in Till's OAuth app on each platform. */
export const connectCallbackUrl = (baseUrl: string, platform: OAuthPlatform) => `${baseUrl.replace(/\/$/, '')}${CALLBACK_BASE}/${platform}/callback`;

function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return decodeURIComponent(part.slice(at + 1).trim());
  }
  return undefined;
}

const platformOf = (raw: string): OAuthPlatform => {
  if (!(OAUTH_PLATFORMS as readonly string[]).includes(raw)) throw new CoreError('not_found', 'NOT_FOUND', 'Not found');
  return raw as OAuthPlatform;
};

const queryText = (req: Request, name: string): string | undefined => (typeof req.query[name] === 'string' ? (req.query[name] as string) : undefined);

/** Where to come back to: a path of this organization's portal (never another site), else the portal itself. */
function returnPath(slug: string, raw: string | undefined): string {
  const portal = `/portal/${encodeURIComponent(slug)}`;
  if (!raw || !(raw === portal || raw.startsWith(`${portal}/`) || raw.startsWith(`${portal}?`)) || /[\\\s]/.test(raw)) return portal;
  return raw;
}

function withQuery(path: string, values: Record<string, string>): string {
  const url = new URL(path, 'http://portal.invalid');
  for (const [key, value] of Object.entries(values)) url.searchParams.set(key, value);
  return `${url.pathname}${url.search}`;
}

/** GET /portal/:slug/connect/:platform?grant_id=…[&return_to=/portal/:slug/…]: off to the platform's consent page. */
function start(deps: AppDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const platform = platformOf(String(req.params.platform));
      const slug = String(req.params.slug);
      const organizationId = await organizationIdBySlug(deps.db, slug);
      if (!organizationId) throw new CoreError('not_found', 'ORGANIZATION_NOT_FOUND', 'Organization not found');
      const bearer = req.headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
      const token = cookieOf(req, PORTAL_COOKIE) ?? queryText(req, 'customer_session_token') ?? bearer;
      const clock = deps.clock ?? systemClock;
      const customer = token ? await authenticateCustomerSession(deps.db, clock, token) : undefined;
      if (!customer || customer.organizationId !== organizationId) {
        throw new CoreError('unauthorized', 'INVALID_CUSTOMER_SESSION', 'Sign in to the customer portal first: this link needs a live customer session');
      }
      const grantId = queryText(req, 'grant_id');
      if (!grantId) throw new CoreError('bad_request', 'GRANT_ID_REQUIRED', 'Say which benefit to connect the account for (grant_id)');
      const { authorizeUrl, browserToken } = await startConnect(
        deps.db,
        clock,
        { organizationId, customerId: customer.customerId, sessionId: customer.sessionId },
        { grantId, platform, redirectUri: connectCallbackUrl(deps.baseUrl, platform), returnTo: returnPath(slug, queryText(req, 'return_to')) },
      );
      const secure = deps.baseUrl.startsWith('https://') ? '; Secure' : '';
      // SameSite=Lax: the platform's redirect back is a top-level GET, which carries it.
      res.append('Set-Cookie', `${BROWSER_COOKIE}=${browserToken}; Path=${CALLBACK_BASE}/${platform}; HttpOnly; SameSite=Lax; Max-Age=${CONNECT_STATE_TTL_MS / 1000}${secure}`);
      res.set('Cache-Control', 'no-store');
      res.redirect(303, authorizeUrl);
    } catch (error) {
      next(error);
    }
  };
}

/** GET /portal/oauth/:platform/callback?code=…&state=…: the account is kept and named on the grant. */
function callback(deps: AppDeps): RequestHandler {
  return async (req, res: Response, next) => {
    try {
      const platform = platformOf(String(req.params.platform));
      const outcome = await finishConnect(deps.db, deps.clock ?? systemClock, {
        platform,
        state: queryText(req, 'state') ?? '',
        browserToken: cookieOf(req, BROWSER_COOKIE),
        code: queryText(req, 'code'),
        error: queryText(req, 'error'),
        redirectUri: connectCallbackUrl(deps.baseUrl, platform),
      });
      res.append('Set-Cookie', `${BROWSER_COOKIE}=; Path=${CALLBACK_BASE}/${platform}; HttpOnly; SameSite=Lax; Max-Age=0`);
      res.set('Cache-Control', 'no-store');
      res.redirect(303, withQuery(outcome.returnTo, outcome.ok ? { connected: platform } : { connect_error: outcome.message }));
    } catch (error) {
      next(error);
    }
  };
}

/** The connection routes; mounted among the page routes, whose error handler shows refusals as pages. */
export function portalConnectRoutes(deps: AppDeps): Router {
  const router = Router();
  router.get('/portal/:slug/connect/:platform', start(deps));
  router.get(`${CALLBACK_BASE}/:platform/callback`, callback(deps));
  return router;
}
