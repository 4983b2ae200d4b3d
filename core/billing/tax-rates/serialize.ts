import { z } from 'zod';
import type { TaxRate } from './schema.js';

const Timestamp = z.iso.datetime({ offset: true });

/** A tax rate on the wire: what serializeTaxRate writes and the OpenAPI document shows. */
export const TaxRateAnswer = z.object({
  id: z.string(),
  created_at: Timestamp,
  modified_at: Timestamp.nullable(),
  organization_id: z.string(),
  country: z.string().length(2).describe('ISO 3166-1 alpha-2'),
  state: z.string().nullable().describe('null: the whole country'),
  basis_points: z.int().min(0).describe('1% is 100'),
});

/** A tax rate on the wire (Till's extension; no Polar counterpart). */
export function serializeTaxRate(rate: TaxRate): z.input<typeof TaxRateAnswer> {
  return {
    id: rate.id,
    created_at: rate.createdAt.toISOString(),
    modified_at: rate.modifiedAt?.toISOString() ?? null,
    organization_id: rate.organizationId,
    country: rate.country,
    state: rate.state,
    basis_points: rate.basisPoints,
  };
}
