import { VISIBILITY_CONFIGURABLE, type Benefit } from './schema.js';

/** Polar's Benefit (the one place its wire shape is written). */
export function serializeBenefit(benefit: Benefit) {
  return {
    id: benefit.id,
    created_at: benefit.createdAt.toISOString(),
    modified_at: benefit.modifiedAt?.toISOString() ?? null,
    type: benefit.type,
    description: benefit.description,
    selectable: benefit.selectable,
    deletable: benefit.deletable,
    is_deleted: benefit.deletedAt !== null,
    organization_id: benefit.organizationId,
    metadata: benefit.metadata,
    visibility: benefit.visibility ?? 'public',
    visibility_configurable: VISIBILITY_CONFIGURABLE.has(benefit.type),
    properties: benefit.properties,
  };
}
export type BenefitWire = ReturnType<typeof serializeBenefit>;
