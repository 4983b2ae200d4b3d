import type { Request, Response } from 'express';
import type { AppDeps } from '../../app.js';
import { systemClock } from '../../../core/clock.js';
import { authenticateCustomerSession, CUSTOMER_SESSION_TTL_SECONDS, type CustomerPrincipal } from '../../../core/billing/customer-sessions/service.js';
import { findOrganizationBySlug } from '../../../core/billing/organizations/repository.js';
import type { Organization } from '../../../core/billing/organizations/schema.js';

/** The portal's cookie: a customer session token (till_cst_…, hashed at rest), scoped to one organization's portal path. */
export const PORTAL_COOKIE = 'till_portal';

export const portalPath = (slug: string) => `/portal/${encodeURIComponent(slug)}`;

function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return decodeURIComponent(part.slice(at + 1).trim());
  }
  return undefined;
}

function cookieAttributes(deps: AppDeps, slug: string, maxAge: number): string {
  const secure = deps.baseUrl.startsWith('https://') ? '; Secure' : '';
  return `Path=${portalPath(slug)}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
}

/** Signs the browser in to one organization's portal with a customer session token. */
export function setPortalCookie(deps: AppDeps, res: Response, slug: string, token: string): void {
  res.append('Set-Cookie', `${PORTAL_COOKIE}=${encodeURIComponent(token)}; ${cookieAttributes(deps, slug, CUSTOMER_SESSION_TTL_SECONDS)}`);
}

export function clearPortalCookie(deps: AppDeps, res: Response, slug: string): void {
  res.append('Set-Cookie', `${PORTAL_COOKIE}=; ${cookieAttributes(deps, slug, 0)}`);
}

/** The token the portal cookie carries, if any (checked by portalCustomer). */
export const portalToken = (req: Request): string | undefined => cookieOf(req, PORTAL_COOKIE);

/**
 * The customer signed in to this organization's portal (from the portal cookie), or undefined. A session of another
 * organization's customer is no session here. Other portal routes (e.g. account connection) read the customer this way.
 */
export async function portalCustomer(deps: AppDeps, req: Request, organization: Pick<Organization, 'id'>): Promise<CustomerPrincipal | undefined> {
  const token = portalToken(req);
  if (!token) return undefined;
  const principal = await authenticateCustomerSession(deps.db, deps.clock ?? systemClock, token);
  return principal?.organizationId === organization.id ? principal : undefined;
}

/** The organization whose portal the path names; undefined for an unknown slug. */
export const portalOrganization = (deps: AppDeps, slug: string) => findOrganizationBySlug(deps.db, slug);
