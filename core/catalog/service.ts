import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { CoreError } from '../errors.js';
import { deleteBinding, findBinding, findBindingOfObject, insertBinding, listBindings, objectExists } from './repository.js';
import type { CatalogKeyBind, CatalogKeyBinding, CatalogKind } from './schema.js';

/** Every key the organization's catalog file has given (to objects that may since have been deleted). */
export async function catalogKeys(db: Database, organizationId: string): Promise<CatalogKeyBinding[]> {
  return listBindings(db, organizationId);
}

const taken = (message: string, field: 'key' | 'object_id') =>
  new CoreError('conflict', 'CATALOG_KEY_TAKEN', message, [{ loc: ['body', field], msg: message, type: 'catalog_key_taken' }]);

/**
 * Names an object by a key. Binding a key to the object it already names is a no-op (so an interrupted
 * `till apply` can bind again); a key naming another object, or an object named by another key, is refused,
 * unless the other object no longer exists (then the key moves: the file re-created it).
 */
export async function bindCatalogKey(db: Database, clock: Clock, organizationId: string, input: CatalogKeyBind): Promise<CatalogKeyBinding> {
  if (!(await objectExists(db, organizationId, input.kind, input.object_id))) {
    throw new CoreError('invalid', 'CATALOG_OBJECT_NOT_FOUND', `No ${input.kind} ${input.object_id} in this organization`, [
      { loc: ['body', 'object_id'], msg: `No ${input.kind} with this id in the organization`, type: 'not_found' },
    ]);
  }
  return db.transaction(async (trx) => {
    const current = await findBinding(trx, organizationId, input.kind, input.key);
    if (current?.objectId === input.object_id) return current;
    if (current) {
      if (await objectExists(trx, organizationId, input.kind, current.objectId)) throw taken(`The key ${input.key} already names ${input.kind} ${current.objectId}`, 'key');
      await deleteBinding(trx, organizationId, input.kind, input.key);
    }
    const other = await findBindingOfObject(trx, organizationId, input.kind, input.object_id);
    if (other) throw taken(`This ${input.kind} is already named ${other.key}`, 'object_id');
    const binding = { organizationId, kind: input.kind as CatalogKind, key: input.key, objectId: input.object_id, createdAt: clock.now() };
    if (!(await insertBinding(trx, binding))) throw taken(`The key ${input.key} was just given to another ${input.kind}`, 'key');
    return binding;
  });
}

export const serializeBinding = (binding: CatalogKeyBinding) => ({
  organization_id: binding.organizationId,
  kind: binding.kind,
  key: binding.key,
  object_id: binding.objectId,
  created_at: binding.createdAt.toISOString(),
});
