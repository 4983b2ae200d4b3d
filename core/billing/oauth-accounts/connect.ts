import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError, isCoreError } from '../../errors.js';
import { connectGrantAccount } from '../benefit-grants/connect-account.js';
import { findGrant } from '../benefit-grants/repository.js';
import { stateOf } from '../benefit-grants/state.js';
import { findBenefit } from '../benefits/repository.js';
import { connectorFor, sealKey } from './connectors.js';
import { claimConnectState, customerSessionLive, findConnectState, insertConnectState, saveOAuthAccount } from './repository.js';
import { PLATFORM_NAMES, PLATFORM_OF, type OAuthPlatform } from './schema.js';

/** How long the customer has to consent on GitHub or Discord. */
export const CONNECT_STATE_TTL_MS = 10 * 60 * 1000;

const hash = (value: string) => createHash('sha256').update(value).digest('hex');
const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The customer (of one organization, through one session) connecting an account. */
export interface Connecting {
  organizationId: string;
  customerId: string;
  /** The customer session the request came with, if any: the connection ends with it. */
  sessionId: string | null;
}

/**
 * Starts connecting a GitHub or Discord account for one of the customer's grants: answers the platform's
 * authorization URL, with a single-use state bound to this grant and to the customer, and a browser token (a cookie)
 * that the callback must come back with, so a link started by someone else cannot attach their account here.
 */
export async function startConnect(
  db: Database,
  clock: Clock,
  who: Connecting,
  input: { grantId: string; platform: OAuthPlatform; redirectUri: string; returnTo: string },
): Promise<{ authorizeUrl: string; browserToken: string }> {
  const connector = connectorFor(input.platform);
  if (!connector) throw new CoreError('not_found', 'OAUTH_NOT_CONFIGURED', `This Till server has no ${PLATFORM_NAMES[input.platform]} integration configured`);
  const grant = await findGrant(db, input.grantId, [who.organizationId]);
  const benefit = grant && grant.customerId === who.customerId ? await findBenefit(db, grant.benefitId, [who.organizationId]) : undefined;
  if (!grant || !benefit) throw new CoreError('not_found', 'BENEFIT_GRANT_NOT_FOUND', 'Benefit grant not found');
  if ((PLATFORM_OF as Record<string, OAuthPlatform>)[benefit.type] !== input.platform) {
    throw new CoreError('bad_request', 'WRONG_PLATFORM', `This benefit does not take a ${PLATFORM_NAMES[input.platform]} account`);
  }
  if (stateOf(grant) === 'revoked') throw new CoreError('forbidden', 'BENEFIT_GRANT_REVOKED', 'This benefit grant is revoked: there is nothing to connect an account to');
  const now = clock.now();
  const state = randomBytes(32).toString('base64url');
  const browserToken = randomBytes(32).toString('base64url');
  await insertConnectState(db, {
    id: newId(),
    stateHash: hash(state),
    browserHash: hash(browserToken),
    organizationId: who.organizationId,
    customerId: who.customerId,
    customerSessionId: who.sessionId,
    grantId: grant.id,
    platform: input.platform,
    returnTo: input.returnTo,
    expiresAt: new Date(now.getTime() + CONNECT_STATE_TTL_MS),
    usedAt: null,
    createdAt: now,
  });
  return { authorizeUrl: connector.authorizeUrl({ state, redirectUri: input.redirectUri }), browserToken };
}

export type ConnectOutcome =
  | { ok: true; returnTo: string; platform: OAuthPlatform; accountId: string; username: string | null }
  | { ok: false; returnTo: string; platform: OAuthPlatform; message: string };

const badState = () =>
  new CoreError('bad_request', 'OAUTH_STATE_INVALID', 'This connection link is not valid any more (expired, already used, or started in another browser). Start again from the portal.');

/**
 * The platform's callback: checks the state (known, unexpired, unused, started in this browser, for the platform
 * called back), exchanges the code, keeps the account on the customer and names it on the grant, whose job then
 * gives the access. A refusal after the state is known (consent denied, a code refused) is an outcome to show on
 * the portal, not an error page.
 */
export async function finishConnect(
  db: Database,
  clock: Clock,
  input: { platform: OAuthPlatform; state: string; browserToken: string | undefined; code: string | undefined; error: string | undefined; redirectUri: string },
): Promise<ConnectOutcome> {
  const found = input.state ? await findConnectState(db, hash(input.state)) : undefined;
  const now = clock.now();
  if (!found || found.platform !== input.platform || found.usedAt || found.expiresAt <= now) throw badState();
  if (!input.browserToken || !sameHash(hash(input.browserToken), found.browserHash)) throw badState();
  if (!(await claimConnectState(db, found.id, now))) throw badState();
  const fail = (message: string): ConnectOutcome => ({ ok: false, returnTo: found.returnTo, platform: found.platform, message });
  if (input.error || !input.code) return fail(input.error === 'access_denied' ? `The ${PLATFORM_NAMES[found.platform]} connection was declined` : `${PLATFORM_NAMES[found.platform]} did not authorize the connection`);
  if (found.customerSessionId && !(await customerSessionLive(db, found.customerSessionId, now))) throw badState();
  const connector = connectorFor(found.platform);
  if (!connector) return fail(`This Till server has no ${PLATFORM_NAMES[found.platform]} integration configured`);
  try {
    const account = await connector.connect({ code: input.code, redirectUri: input.redirectUri, now });
    await saveOAuthAccount(db, sealKey(), { ...found, accountId: account.accountId, username: account.username, tokens: account.tokens, at: now });
    const benefitType = found.platform === 'github' ? 'github_repository' : 'discord';
    await connectGrantAccount(db, clock, found, found.grantId, { benefitType, accountId: account.accountId });
    return { ok: true, returnTo: found.returnTo, platform: found.platform, accountId: account.accountId, username: account.username };
  } catch (error) {
    if (isCoreError(error)) return fail(error.message);
    throw error;
  }
}
