import type { CustomField } from './schema.js';

/**
 * The CustomField of Polar's API (the one place its wire shape is written). `properties` holds only the
 * keys that were given: the SDK accepts a missing key but refuses a null one.
 */
export function serializeCustomField(field: CustomField) {
  return {
    id: field.id,
    created_at: field.createdAt.toISOString(),
    modified_at: field.modifiedAt?.toISOString() ?? null,
    metadata: field.metadata,
    type: field.type,
    slug: field.slug,
    name: field.name,
    organization_id: field.organizationId,
    properties: Object.fromEntries(Object.entries(field.properties).filter(([, value]) => value !== undefined && value !== null)),
  };
}
export type CustomFieldWire = ReturnType<typeof serializeCustomField>;
