import type { AccessToken } from './schema.js';

/** Polar's OrganizationAccessToken (the one place its wire shape is written); never the token itself. */
export function serializeAccessToken(token: AccessToken) {
  return {
    id: token.id,
    created_at: token.createdAt.toISOString(),
    modified_at: token.modifiedAt?.toISOString() ?? null,
    scopes: token.scopes,
    expires_at: token.expiresAt?.toISOString() ?? null,
    comment: token.comment,
    last_used_at: token.lastUsedAt?.toISOString() ?? null,
    organization_id: token.organizationId,
  };
}
