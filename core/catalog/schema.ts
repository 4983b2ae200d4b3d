import { z } from 'zod';
import type { Scope } from '../billing/shared/scopes.js';

/** The kinds of object a catalog file names by key, with the table each lives in and the scope that writes it. */
export const CATALOG_KINDS = {
  meter: { table: 'meters', write: 'meters:write', read: 'meters:read' },
  custom_field: { table: 'custom_fields', write: 'custom_fields:write', read: 'custom_fields:read' },
  benefit: { table: 'benefits', write: 'benefits:write', read: 'benefits:read' },
  product: { table: 'products', write: 'products:write', read: 'products:read' },
  discount: { table: 'discounts', write: 'discounts:write', read: 'discounts:read' },
  webhook: { table: 'webhook_endpoints', write: 'webhooks:write', read: 'webhooks:read' },
  tax_rate: { table: 'tax_rates', write: 'products:write', read: 'products:read' },
} as const satisfies Record<string, { table: string; write: Scope; read: Scope }>;
export type CatalogKind = keyof typeof CATALOG_KINDS;
export const CATALOG_KIND_NAMES = Object.keys(CATALOG_KINDS) as CatalogKind[];

/** A key as a catalog file writes it: lowercase letters, digits, `-`, `_` and `.`, starting with a letter or digit. */
export const CatalogKey = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,99}$/, 'Use 1–100 lowercase letters, digits, "-", "_" and ".", starting with a letter or digit');

/** POST /v1/catalog/keys: name an object of the organization by a key (the same binding again is a no-op). */
export const CatalogKeyBind = z.object({
  organization_id: z.string().min(1).nullish(),
  kind: z.enum(CATALOG_KIND_NAMES as [CatalogKind, ...CatalogKind[]]),
  key: CatalogKey,
  object_id: z.string().min(1).max(100),
});
export type CatalogKeyBind = z.infer<typeof CatalogKeyBind>;

export interface CatalogKeyBinding {
  organizationId: string;
  kind: CatalogKind;
  key: string;
  objectId: string;
  createdAt: Date;
}
