import type { BenefitGrant, GrantError } from './schema.js';

/**
 * A grant's state, derived from its columns: `granted` (in effect), `revoked`, or `pending` (never granted, or
 * a grant that failed and records why in `error`).
 */
export type GrantState = 'pending' | 'granted' | 'revoked';

export const stateOf = (grant: BenefitGrant): GrantState => (grant.grantedAt ? 'granted' : grant.revokedAt ? 'revoked' : 'pending');

/** The transitions a grant may take. Granting a granted grant or revoking a revoked one is a no-op, not a change. */
export const GRANT_TRANSITIONS: Readonly<Record<GrantState, readonly GrantState[]>> = {
  pending: ['granted', 'pending', 'revoked'],
  granted: ['revoked'],
  revoked: ['granted', 'pending'],
};

export const canMove = (from: GrantState, to: GrantState) => GRANT_TRANSITIONS[from].includes(to);

/** The grant once granted at `now` with these properties (Polar clears revoked_at and any earlier error). */
export const granted = (grant: BenefitGrant, properties: BenefitGrant['properties'], now: Date): BenefitGrant => ({
  ...grant,
  grantedAt: now,
  revokedAt: null,
  error: null,
  previousProperties: grant.properties,
  properties,
  modifiedAt: now,
});

/** The grant once revoked at `now` (Polar clears granted_at: a revoked grant reads is_granted false). */
export const revoked = (grant: BenefitGrant, properties: BenefitGrant['properties'], now: Date): BenefitGrant => ({
  ...grant,
  grantedAt: null,
  revokedAt: now,
  previousProperties: grant.properties,
  properties,
  modifiedAt: now,
});

/** The grant left not granted, with the reason it could not be. */
export const failed = (grant: BenefitGrant, error: GrantError, now: Date): BenefitGrant => ({ ...grant, grantedAt: null, error, modifiedAt: now });
