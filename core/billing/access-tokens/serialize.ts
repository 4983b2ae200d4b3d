import { z } from 'zod';
import { Scope } from '../shared/scopes.js';
import type { AccessToken } from './schema.js';

const Timestamp = z.iso.datetime({ offset: true });

/** Polar's OrganizationAccessToken on the wire: what serializeAccessToken writes and the OpenAPI document shows. */
export const AccessTokenAnswer = z.object({
  id: z.string(),
  created_at: Timestamp,
  modified_at: Timestamp.nullable(),
  scopes: z.array(Scope),
  expires_at: Timestamp.nullable(),
  comment: z.string(),
  last_used_at: Timestamp.nullable(),
  organization_id: z.string(),
});

/** Polar's OrganizationAccessToken (the one place its wire shape is written); never the token itself. */
export function serializeAccessToken(token: AccessToken): z.input<typeof AccessTokenAnswer> {
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
