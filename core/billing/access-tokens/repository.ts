import type { Knex } from 'knex';
import { fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import type { Scope } from '../shared/scopes.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { AccessToken } from './schema.js';
import { read } from '../../db/read.js';

type Executor = Knex | Knex.Transaction;
const TABLE = 'organization_access_tokens';

function toAccessToken(row: Record<string, unknown>): AccessToken {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    comment: String(row.comment),
    scopes: fromDbJson<Scope[]>(row.scopes),
    expiresAt: fromDbTimeOrNull(row.expires_at),
    lastUsedAt: fromDbTimeOrNull(row.last_used_at),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

export async function insertAccessToken(trx: Executor, token: AccessToken & { tokenHash: string; createdByUserId: string | null }) {
  await trx(TABLE).insert({
    id: token.id,
    organization_id: token.organizationId,
    comment: token.comment,
    scopes: toDbJson(token.scopes),
    token_hash: token.tokenHash,
    created_by_user_id: token.createdByUserId,
    expires_at: toDbTimeOrNull(token.expiresAt),
    last_used_at: null,
    created_at: toDbTime(token.createdAt),
    modified_at: null,
  });
}

/** A live token by its hash (not deleted; expiry is the service's to judge). */
export async function findAccessTokenByHash(db: Executor, tokenHash: string): Promise<AccessToken | undefined> {
  const row = await read<Record<string, unknown> | undefined>(db(TABLE).where({ token_hash: tokenHash }).whereNull('deleted_at').first());
  return row ? toAccessToken(row) : undefined;
}

export async function findAccessToken(db: Executor, id: string, organizationIds: readonly string[]): Promise<AccessToken | undefined> {
  const row = await db(TABLE).where({ id }).whereIn('organization_id', organizationIds).whereNull('deleted_at').first();
  return row ? toAccessToken(row) : undefined;
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'created_at', comment: 'comment', last_used_at: 'last_used_at', organization_id: 'organization_id' };

export async function listAccessTokens(db: Executor, organizationIds: readonly string[], sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<AccessToken>> {
  const scoped = () => db(TABLE).whereIn('organization_id', organizationIds).whereNull('deleted_at');
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped();
  for (const { column, order } of sorting) if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
  const rows = await query.orderBy('id').limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toAccessToken), totalCount: Number(count) };
}

export async function updateAccessToken(trx: Executor, id: string, changes: { comment: string; scopes: Scope[]; modifiedAt: Date }) {
  await trx(TABLE).where({ id }).update({ comment: changes.comment, scopes: toDbJson(changes.scopes), modified_at: toDbTime(changes.modifiedAt) });
}

/** Soft delete: the row stays for the record, the token stops working. Returns whether a live token was deleted. */
export async function deleteAccessToken(trx: Executor, id: string, organizationIds: readonly string[], at: Date): Promise<boolean> {
  const count = await trx(TABLE).where({ id }).whereIn('organization_id', organizationIds).whereNull('deleted_at').update({ deleted_at: toDbTime(at) });
  return count > 0;
}

/** Marks a token used, at most once a minute, so authenticating stays a read almost always. */
export async function touchAccessToken(db: Executor, id: string, at: Date): Promise<void> {
  const staleBefore = toDbTime(new Date(at.getTime() - 60_000)); // concurrent readers: one of them writes
  await db(TABLE)
    .where({ id })
    .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', staleBefore))
    .update({ last_used_at: toDbTime(at) });
}
