import type { Executor } from '../db/database.js';
import { fromDbTime, toDbTime } from '../db/columns.js';
import { CATALOG_KINDS, type CatalogKind, type CatalogKeyBinding } from './schema.js';

const TABLE = 'catalog_keys';

const toBinding = (row: Record<string, unknown>): CatalogKeyBinding => ({
  organizationId: String(row.organization_id),
  kind: String(row.kind) as CatalogKind,
  key: String(row.key),
  objectId: String(row.object_id),
  createdAt: fromDbTime(row.created_at),
});

export async function listBindings(db: Executor, organizationId: string): Promise<CatalogKeyBinding[]> {
  const rows = await db(TABLE).where({ organization_id: organizationId }).orderBy([{ column: 'kind' }, { column: 'key' }]);
  return rows.map(toBinding);
}

export async function findBinding(db: Executor, organizationId: string, kind: CatalogKind, key: string): Promise<CatalogKeyBinding | undefined> {
  const row = await db(TABLE).where({ organization_id: organizationId, kind, key }).first();
  return row ? toBinding(row) : undefined;
}

export async function findBindingOfObject(db: Executor, organizationId: string, kind: CatalogKind, objectId: string): Promise<CatalogKeyBinding | undefined> {
  const row = await db(TABLE).where({ organization_id: organizationId, kind, object_id: objectId }).first();
  return row ? toBinding(row) : undefined;
}

/** Whether the organization has this object of this kind. */
export async function objectExists(db: Executor, organizationId: string, kind: CatalogKind, objectId: string): Promise<boolean> {
  const row = await db(CATALOG_KINDS[kind].table).where({ id: objectId, organization_id: organizationId }).first('id');
  return row !== undefined;
}

/** Inserts the binding unless one holds the key or the object already; answers whether it was inserted. */
export async function insertBinding(db: Executor, binding: CatalogKeyBinding): Promise<boolean> {
  const rows = await db(TABLE)
    .insert({ organization_id: binding.organizationId, kind: binding.kind, key: binding.key, object_id: binding.objectId, created_at: toDbTime(binding.createdAt) })
    .onConflict()
    .ignore()
    .returning('key');
  return rows.length === 1;
}

export async function deleteBinding(db: Executor, organizationId: string, kind: CatalogKind, key: string): Promise<void> {
  await db(TABLE).where({ organization_id: organizationId, kind, key }).delete();
}
