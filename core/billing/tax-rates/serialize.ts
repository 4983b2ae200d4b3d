import type { TaxRate } from './schema.js';

/** A tax rate on the wire (Till's extension; no Polar counterpart). */
export function serializeTaxRate(rate: TaxRate) {
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
