import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import type { Mailer } from '../../mail/mailer.js';
import { portalCodeMail } from '../../mail/messages.js';
import { findCustomerByEmail } from '../customers/repository.js';
import type { Organization } from '../organizations/schema.js';
import { claimCode, countRecentCodes, deleteExpiredCodes, findLiveCode, insertCode, lockCodeRequests, recordWrongAttempt } from './portal-codes-repository.js';
import { createCustomerSession, type CustomerSession } from './service.js';

/** A code works this long after it is mailed. */
export const PORTAL_CODE_TTL_MINUTES = 10;
/** Wrong guesses a code survives; then a new one must be asked for. */
export const PORTAL_CODE_MAX_ATTEMPTS = 5;
/** Rate limits, over the last RATE_WINDOW_MINUTES: codes per address of an organization, and per requesting IP. */
export const PORTAL_CODES_PER_EMAIL = 3;
export const PORTAL_CODES_PER_IP = 10;
export const RATE_WINDOW_MINUTES = 15;

export interface PortalCodeDeps {
  db: Database;
  clock: Clock;
  mailer: Mailer;
  /** Till's secret: codes and IPs are kept as HMACs under it, so a copy of the table guesses nothing offline. */
  secret: string;
}

const hmac = (secret: string, ...parts: string[]) => createHmac('sha256', secret).update(parts.join('\u0000')).digest('hex');
const normalized = (email: string) => email.trim().toLowerCase();

/**
 * Mails a one-time code to `email` if a customer of the organization has it. The caller's answer is the same either
 * way (nothing here says whether one does); a row is written either way, so the rate limits are too.
 */
export async function requestPortalCode(deps: PortalCodeDeps, organization: Organization, input: { email: string; ip: string; signInUrl: string }): Promise<void> {
  const emailLower = normalized(input.email);
  const now = deps.clock.now();
  const ipHash = hmac(deps.secret, 'ip', input.ip);
  const since = new Date(now.getTime() - RATE_WINDOW_MINUTES * 60_000);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const id = newId();
  await deps.db.transaction(async (trx) => {
    // The limits are counted and the code inserted under one lock: a burst of concurrent requests cannot all pass
    // the count before any of them has inserted.
    await lockCodeRequests(trx, organization.id, emailLower, ipHash);
    const recent = await countRecentCodes(trx, organization.id, emailLower, ipHash, since);
    if (recent.byEmail >= PORTAL_CODES_PER_EMAIL || recent.byIp >= PORTAL_CODES_PER_IP) {
      throw new CoreError('rate_limited', 'PORTAL_CODE_RATE_LIMITED', `Too many codes were asked for. Wait ${RATE_WINDOW_MINUTES} minutes, then ask again.`);
    }
    await deleteExpiredCodes(trx, since);
    await insertCode(trx, {
      id,
      organizationId: organization.id,
      emailLower,
      codeHash: hmac(deps.secret, 'code', id, code),
      ipHash,
      attempts: 0,
      expiresAt: new Date(now.getTime() + PORTAL_CODE_TTL_MINUTES * 60_000),
      usedAt: null,
      createdAt: now,
    });
    const customer = await findCustomerByEmail(trx, organization.id, emailLower);
    // Written to the outbox in this transaction: the code exists exactly when its mail does.
    if (customer) await deps.mailer.send(portalCodeMail(customer.email, organization.name, code, PORTAL_CODE_TTL_MINUTES, input.signInUrl), trx);
  });
}

const invalidCode = () => new CoreError('invalid', 'PORTAL_CODE_INVALID', 'That code is not right, or no longer works. Check the latest email, or ask for a new code.');

/**
 * Trades a mailed code for a customer session (a new till_cst_ token, hashed at rest like every session). The code is
 * claimed atomically, so it signs in once; every failure reads the same, whether or not the address is a customer's.
 */
export async function verifyPortalCode(deps: PortalCodeDeps, organization: Organization, input: { email: string; code: string }): Promise<{ session: CustomerSession; token: string }> {
  const emailLower = normalized(input.email);
  const given = input.code.replace(/\s+/g, '');
  const now = deps.clock.now();
  const live = await findLiveCode(deps.db, organization.id, emailLower, now);
  if (!live || live.attempts >= PORTAL_CODE_MAX_ATTEMPTS || !/^\d{6}$/.test(given)) {
    if (live && live.attempts < PORTAL_CODE_MAX_ATTEMPTS) await recordWrongAttempt(deps.db, live);
    throw invalidCode();
  }
  const expected = Buffer.from(live.codeHash);
  const actual = Buffer.from(hmac(deps.secret, 'code', live.id, given));
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    await recordWrongAttempt(deps.db, live);
    throw invalidCode();
  }
  if (!(await claimCode(deps.db, live, now, PORTAL_CODE_MAX_ATTEMPTS))) throw invalidCode();
  const customer = await findCustomerByEmail(deps.db, organization.id, emailLower);
  if (!customer) throw invalidCode();
  const { session, token } = await createCustomerSession(deps.db, deps.clock, new Set([organization.id]), { id: customer.id }, null);
  return { session, token };
}
