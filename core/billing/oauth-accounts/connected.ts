import type { Database } from '../../db/database.js';
import { GrantFailure, type ConnectedAccount } from '../benefit-grants/providers/provider.js';
import { connectorFor, sealKey } from './connectors.js';
import { findOAuthAccount, saveOAuthTokens } from './repository.js';
import { PLATFORM_NAMES, type OAuthPlatform } from './schema.js';

/** A token this close to its expiry is refreshed before use. */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * The customer's connected account as a provider uses it: its access token is refreshed (and the new tokens kept)
 * when it expired. No account, no token or a refused refresh all need the customer to connect again.
 */
export async function connectedAccount(db: Database, now: Date, customerId: string, platform: OAuthPlatform, accountId: string): Promise<ConnectedAccount> {
  const key = sealKey();
  const account = await findOAuthAccount(db, key, customerId, platform, accountId);
  const reconnect = (why: string) => new GrantFailure('BenefitActionRequired', `${why}: the customer must connect their ${PLATFORM_NAMES[platform]} account again from the portal`);
  if (!account) throw reconnect(`The ${PLATFORM_NAMES[platform]} account ${accountId} is not connected to this customer`);
  return {
    id: account.accountId,
    username: account.accountUsername,
    async accessToken() {
      const tokens = account.tokens;
      if (!tokens) throw reconnect(`No ${PLATFORM_NAMES[platform]} token is kept for this account`);
      if (!tokens.expiresAt || tokens.expiresAt.getTime() - EXPIRY_MARGIN_MS > now.getTime()) return tokens.accessToken;
      const refresh = connectorFor(platform)?.refresh;
      if (!tokens.refreshToken || !refresh) throw reconnect(`The ${PLATFORM_NAMES[platform]} token expired`);
      const fresh = await refresh(tokens.refreshToken, now);
      await saveOAuthTokens(db, key, account.id, fresh ?? null, now);
      if (!fresh) throw reconnect(`${PLATFORM_NAMES[platform]} refused to renew the token`);
      return fresh.accessToken;
    },
  };
}
