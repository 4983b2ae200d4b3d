import { z } from 'zod';

/** Polar's access-token scopes that Till's /v1 honours. */
export const SCOPES = [
  'organizations:read', 'organizations:write',
  'organization_access_tokens:read', 'organization_access_tokens:write',
  'products:read', 'products:write',
  'benefits:read', 'benefits:write',
  'files:read', 'files:write',
  'custom_fields:read', 'custom_fields:write',
  'discounts:read', 'discounts:write',
  'checkout_links:read', 'checkout_links:write',
  'customers:read', 'customers:write',
  'customer_sessions:write',
  'checkouts:read', 'checkouts:write',
  'orders:read', 'orders:write',
  'subscriptions:read', 'subscriptions:write',
  'refunds:read', 'refunds:write',
  'payments:read',
  'disputes:read', 'disputes:write',
  'license_keys:read', 'license_keys:write',
  'meters:read', 'meters:write',
  'customer_meters:read',
  'events:read', 'events:write',
  'webhooks:read', 'webhooks:write',
  'metrics:read',
] as const;
export const Scope = z.enum(SCOPES);
export type Scope = z.infer<typeof Scope>;

export const READ_SCOPES: readonly Scope[] = SCOPES.filter((scope) => scope.endsWith(':read'));

/** What a member's organization role may do through /v1: owner and admin write, everyone else reads. */
export function scopesOfRole(role: string): ReadonlySet<Scope> {
  const roles = role.split(',').map((r) => r.trim());
  return new Set(roles.includes('owner') || roles.includes('admin') ? SCOPES : READ_SCOPES);
}
