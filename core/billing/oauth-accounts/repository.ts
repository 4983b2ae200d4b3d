import type { Knex } from 'knex';
import { fromDbTime, fromDbTimeOrNull, newId, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { seal, unseal } from './seal.js';
import type { OAuthAccount, OAuthAccountName, OAuthPlatform, OAuthTokens } from './schema.js';

type Executor = Knex | Knex.Transaction;
const ACCOUNTS = 'customer_oauth_accounts';
const STATES = 'oauth_connect_states';

function toAccount(row: Record<string, unknown>, key: Buffer): OAuthAccount {
  const accessToken = typeof row.access_token === 'string' ? unseal(key, row.access_token) : undefined;
  const refreshToken = typeof row.refresh_token === 'string' ? (unseal(key, row.refresh_token) ?? null) : null;
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    platform: row.platform as OAuthPlatform,
    accountId: String(row.account_id),
    accountUsername: (row.account_username as string | null) ?? null,
    // A token sealed under another secret opens nothing: the account reads as without tokens (connect again).
    tokens: accessToken ? { accessToken, refreshToken, expiresAt: fromDbTimeOrNull(row.access_token_expires_at) } : null,
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

const tokenColumns = (key: Buffer, tokens: OAuthTokens | null) => ({
  access_token: tokens ? seal(key, tokens.accessToken) : null,
  refresh_token: tokens?.refreshToken ? seal(key, tokens.refreshToken) : null,
  access_token_expires_at: toDbTimeOrNull(tokens?.expiresAt ?? null),
});

/** Stores (or refreshes) a customer's account on a platform: one row per customer, platform and account. */
export async function saveOAuthAccount(
  trx: Executor,
  key: Buffer,
  input: { organizationId: string; customerId: string; platform: OAuthPlatform; accountId: string; username: string | null; tokens: OAuthTokens | null; at: Date },
): Promise<void> {
  await trx(ACCOUNTS)
    .insert({
      id: newId(),
      organization_id: input.organizationId,
      customer_id: input.customerId,
      platform: input.platform,
      account_id: input.accountId,
      account_username: input.username,
      ...tokenColumns(key, input.tokens),
      created_at: toDbTime(input.at),
      modified_at: null,
    })
    .onConflict(['customer_id', 'platform', 'account_id'])
    .merge({ account_username: input.username, ...tokenColumns(key, input.tokens), modified_at: toDbTime(input.at) });
}

export async function findOAuthAccount(db: Executor, key: Buffer, customerId: string, platform: OAuthPlatform, accountId: string): Promise<OAuthAccount | undefined> {
  const row = await db(ACCOUNTS).where({ customer_id: customerId, platform, account_id: accountId }).first();
  return row ? toAccount(row, key) : undefined;
}

/** A customer's connected accounts, oldest first. */
export async function listOAuthAccounts(db: Executor, key: Buffer, customerId: string): Promise<OAuthAccount[]> {
  const rows = await db(ACCOUNTS).where({ customer_id: customerId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((row) => toAccount(row, key));
}

/** A customer's connected accounts without their tokens (what the customer is shown), oldest first. */
export async function listOAuthAccountNames(db: Executor, customerId: string): Promise<OAuthAccountName[]> {
  const rows = await db(ACCOUNTS).where({ customer_id: customerId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('platform', 'account_id', 'account_username');
  return rows.map((row) => ({ platform: row.platform as OAuthPlatform, accountId: String(row.account_id), accountUsername: (row.account_username as string | null) ?? null }));
}

/** Replaces an account's tokens after a refresh (or drops them, null, when the platform refused the refresh). */
export async function saveOAuthTokens(db: Executor, key: Buffer, id: string, tokens: OAuthTokens | null, at: Date): Promise<void> {
  await db(ACCOUNTS).where({ id }).update({ ...tokenColumns(key, tokens), modified_at: toDbTime(at) });
}

export interface ConnectState {
  id: string;
  browserHash: string;
  organizationId: string;
  customerId: string;
  customerSessionId: string | null;
  grantId: string;
  platform: OAuthPlatform;
  returnTo: string;
  expiresAt: Date;
  usedAt: Date | null;
}

export async function insertConnectState(db: Executor, state: ConnectState & { stateHash: string; createdAt: Date }): Promise<void> {
  // A customer's spent and expired states are dropped as new ones are made.
  await db(STATES).where({ customer_id: state.customerId }).where('expires_at', '<=', toDbTime(state.createdAt)).delete();
  await db(STATES).insert({
    id: state.id,
    state_hash: state.stateHash,
    browser_hash: state.browserHash,
    organization_id: state.organizationId,
    customer_id: state.customerId,
    customer_session_id: state.customerSessionId,
    grant_id: state.grantId,
    platform: state.platform,
    return_to: state.returnTo,
    expires_at: toDbTime(state.expiresAt),
    used_at: null,
    created_at: toDbTime(state.createdAt),
  });
}

export async function findConnectState(db: Executor, stateHash: string): Promise<ConnectState | undefined> {
  const row = await db(STATES).where({ state_hash: stateHash }).first();
  if (!row) return undefined;
  return {
    id: String(row.id),
    browserHash: String(row.browser_hash),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    customerSessionId: (row.customer_session_id as string | null) ?? null,
    grantId: String(row.grant_id),
    platform: row.platform as OAuthPlatform,
    returnTo: String(row.return_to),
    expiresAt: fromDbTime(row.expires_at),
    usedAt: fromDbTimeOrNull(row.used_at),
  };
}

/** Marks a state used, if nobody did first: a state opens one connection only. */
export async function claimConnectState(db: Executor, id: string, at: Date): Promise<boolean> {
  return (await db(STATES).where({ id }).whereNull('used_at').update({ used_at: toDbTime(at) })) === 1;
}

/** Whether the customer session a connection started with is still open (the connection ends with it). */
export async function customerSessionLive(db: Executor, sessionId: string, now: Date): Promise<boolean> {
  return Boolean(await db('customer_sessions').where({ id: sessionId }).where('expires_at', '>', toDbTime(now)).first('id'));
}

/** The id of the organization whose portal slug this is. */
export async function organizationIdBySlug(db: Executor, slug: string): Promise<string | undefined> {
  const row = await db('organization').where({ slug }).first('id');
  return row ? String(row.id) : undefined;
}
