/** What went wrong when a benefit could not be granted (Polar's BenefitGrantError). */
export interface GrantError {
  message: string;
  type: string;
  timestamp: string;
}

/** Per-type properties of a grant, in their wire shape (snake_case), as Polar stores them. */
export type GrantProperties = Record<string, unknown>;

/**
 * A benefit granted (or once granted) to a customer for one subscription or one order. Its state is derived
 * from `grantedAt`, `revokedAt` and `error` (see state.ts); `scope` names what granted it.
 */
export interface BenefitGrant {
  id: string;
  organizationId: string;
  customerId: string;
  benefitId: string;
  subscriptionId: string | null;
  orderId: string | null;
  scope: string;
  grantedAt: Date | null;
  revokedAt: Date | null;
  properties: GrantProperties;
  previousProperties: GrantProperties | null;
  error: GrantError | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** What granted a benefit: one subscription, or one order (a one-time purchase). */
export type GrantSource = { subscriptionId: string; orderId?: string | null } | { subscriptionId?: null; orderId: string };

/** The unique scope of a grant: its subscription when there is one, else its order. */
export function scopeOf(source: { subscriptionId?: string | null; orderId?: string | null }): string {
  if (source.subscriptionId) return `subscription:${source.subscriptionId}`;
  if (source.orderId) return `order:${source.orderId}`;
  throw new TypeError('A benefit grant needs a subscription or an order');
}

export const GRANT_SORT_PROPERTIES = ['created_at', 'granted_at', 'revoked_at'] as const;
