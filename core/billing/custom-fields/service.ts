import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { deleteCustomField as deleteRow, findCustomField, insertCustomField, listCustomFields as listRows, saveCustomField } from './repository.js';
import type { CustomField, CustomFieldCreate, CustomFieldType, CustomFieldUpdate } from './schema.js';

/** The organizations a caller may read in, and those it may also change things in. */
export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

const notFound = () => new CoreError('not_found', 'CUSTOM_FIELD_NOT_FOUND', 'Custom field not found');
const slugTaken = () =>
  new CoreError('invalid', 'CUSTOM_FIELD_SLUG_TAKEN', 'A custom field with this slug exists', [
    { loc: ['body', 'slug'], msg: 'Custom field with this slug already exists.', type: 'value_error' },
  ]);

/** The live field, which the caller may change; anything else is "not found" (or "not permitted" for a reader). */
async function writable(db: Database, access: Access, id: string): Promise<CustomField> {
  const field = await findCustomField(db, id, [...access.read], { forUpdate: true });
  if (!field) throw notFound();
  if (!access.write.has(field.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this custom field but not change it');
  return field;
}

export async function getCustomField(db: Database, readable: ReadonlySet<string>, id: string): Promise<CustomField> {
  const field = await findCustomField(db, id, [...readable]);
  if (!field) throw notFound();
  return field;
}

export function listCustomFields(
  db: Database,
  filter: { organizationIds: readonly string[]; query?: string; types?: readonly CustomFieldType[] },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<CustomField>> {
  return listRows(db, filter, sorting, page);
}

export async function createCustomField(db: Database, clock: Clock, organizationId: string, input: CustomFieldCreate): Promise<CustomField> {
  const field: CustomField = {
    id: newId(),
    organizationId,
    type: input.type,
    slug: input.slug,
    name: input.name,
    properties: input.properties,
    metadata: input.metadata ?? {},
    createdAt: clock.now(),
    modifiedAt: null,
  };
  if (!(await insertCustomField(db, field))) throw slugTaken();
  return field;
}

export async function updateCustomField(db: Database, clock: Clock, access: Access, id: string, input: CustomFieldUpdate): Promise<CustomField> {
  return db.transaction(async (trx) => {
    const current = await writable(trx, access, id);
    if (input.type !== current.type) {
      throw new CoreError('invalid', 'CUSTOM_FIELD_TYPE_FIXED', 'A custom field keeps its type', [
        { loc: ['body', 'type'], msg: "The type of a custom field can't be changed.", type: 'value_error' },
      ]);
    }
    const next: CustomField = {
      ...current,
      slug: input.slug ?? current.slug,
      name: input.name ?? current.name,
      properties: input.properties ?? current.properties,
      metadata: input.metadata ?? current.metadata,
      modifiedAt: clock.now(),
    };
    if (!(await saveCustomField(trx, next))) throw slugTaken();
    return next;
  });
}

/** Soft-deletes a field (204); it is no longer found, and its slug stays reserved. */
export async function deleteCustomField(db: Database, clock: Clock, access: Access, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    await writable(trx, access, id);
    await deleteRow(trx, id, clock.now());
  });
}
