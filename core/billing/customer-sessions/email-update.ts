import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import type { Mailer } from '../../mail/mailer.js';
import { customerEmailChangedMail, customerEmailUpdateMail } from '../../mail/messages.js';
import { findCustomers } from '../customers/repository.js';
import { updateCustomer } from '../customers/service.js';
import { findOrganization } from '../organizations/repository.js';
import {
  claimEmailUpdate,
  countRecentEmailUpdates,
  deleteExpiredEmailUpdates,
  findLiveEmailUpdate,
  insertEmailUpdate,
  lockEmailUpdates,
} from './email-update-repository.js';
import { createCustomerSession, type CustomerPrincipal } from './service.js';

// A customer changes their email address from the portal (Polar's customerPortal.customers.requestEmailUpdate,
// checkEmailUpdate, verifyEmailUpdate): a link is mailed to the NEW address, and following it makes the change.

/** The link works this long, once. */
export const EMAIL_UPDATE_TTL_MINUTES = 30;
/** Requests per customer over the window; past that, 429 until the window has passed. */
export const EMAIL_UPDATES_PER_WINDOW = 3;
export const EMAIL_UPDATE_WINDOW_MINUTES = 15;
const TOKEN_PREFIX = 'till_cev_';

export const CustomerEmailUpdateRequest = z.strictObject({ email: z.email('Enter an email address.').max(320) });
export const CustomerEmailUpdateVerifyRequest = z.strictObject({ token: z.string().min(1).max(200) });

export interface EmailUpdateDeps {
  db: Database;
  clock: Clock;
  mailer: Mailer;
  /** Till's secret: tokens are kept as HMACs under it. */
  secret: string;
  baseUrl: string;
}

const hashOf = (secret: string, token: string) => createHmac('sha256', secret).update(`email-update\u0000${token}`).digest('hex');

/** Polar's InvalidCustomerEmailUpdate (401). */
const invalidUpdate = () => new CoreError('unauthorized', 'INVALID_CUSTOMER_EMAIL_UPDATE', 'This email update request is invalid or has expired.');
const emailIssue = (field: 'email' | 'token', msg: string, input: string) =>
  new CoreError('invalid', 'INVALID_CUSTOMER_EMAIL_UPDATE_REQUEST', msg, [{ type: 'value_error', loc: ['body', field], msg, input }]);

/** Where the mailed link leads: the portal's page that asks the customer to confirm (a GET changes nothing). */
export const emailUpdateUrl = (baseUrl: string, slug: string, token: string) => `${baseUrl.replace(/\/$/, '')}/portal/${encodeURIComponent(slug)}/verify-email?token=${encodeURIComponent(token)}`;

/**
 * Mails a single-use link to `email` for the session customer to make it their address. Refused when the seller does
 * not allow it (403, Polar's NotPermitted), when it is the current address (422), and past the rate limit (429). A
 * newer request replaces an older one. The address's being another customer's is checked when the link is followed
 * (as Polar), so the answer here says nothing about other customers.
 */
export async function requestEmailUpdate(deps: EmailUpdateDeps, principal: CustomerPrincipal, email: string): Promise<void> {
  const organization = await findOrganization(deps.db, principal.organizationId);
  if (!organization) throw invalidUpdate();
  if (!organization.settings.customer_portal_settings.customer.allow_email_change) {
    throw new CoreError('forbidden', 'EMAIL_CHANGE_NOT_ALLOWED', 'Email changes are not enabled for this organization.');
  }
  const now = deps.clock.now();
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  await deps.db.transaction(async (trx) => {
    await lockEmailUpdates(trx, principal.customerId);
    const [customer] = await findCustomers(trx, { id: principal.customerId }, [principal.organizationId]);
    if (!customer) throw invalidUpdate();
    if (customer.email.toLowerCase() === email.toLowerCase()) throw emailIssue('email', 'New email is the same as your current email.', email);
    const since = new Date(now.getTime() - EMAIL_UPDATE_WINDOW_MINUTES * 60_000);
    if ((await countRecentEmailUpdates(trx, customer.id, since)) >= EMAIL_UPDATES_PER_WINDOW) {
      throw new CoreError('rate_limited', 'EMAIL_UPDATE_RATE_LIMITED', `Too many email changes were asked for. Wait ${EMAIL_UPDATE_WINDOW_MINUTES} minutes, then ask again.`);
    }
    await deleteExpiredEmailUpdates(trx, since);
    await insertEmailUpdate(trx, {
      id: newId(),
      organizationId: customer.organizationId,
      customerId: customer.id,
      email,
      tokenHash: hashOf(deps.secret, token),
      expiresAt: new Date(now.getTime() + EMAIL_UPDATE_TTL_MINUTES * 60_000),
      usedAt: null,
      createdAt: now,
    });
    // In the outbox in this transaction: the request exists exactly when its mail does.
    await deps.mailer.send(customerEmailUpdateMail(email, organization.name, emailUpdateUrl(deps.baseUrl, organization.slug, token), EMAIL_UPDATE_TTL_MINUTES), trx);
  });
}

/** Whether a token names an update still waiting (GET …/email-update/check): the page asks before offering to confirm. */
export async function checkEmailUpdate(deps: Pick<EmailUpdateDeps, 'db' | 'clock' | 'secret'>, token: string): Promise<{ email: string; organizationId: string }> {
  const update = await findLiveEmailUpdate(deps.db, hashOf(deps.secret, token), deps.clock.now());
  if (!update) throw invalidUpdate();
  return { email: update.email, organizationId: update.organizationId };
}

/**
 * Makes the change a token names, once: the customer's email becomes the new (verified) address through the
 * seller's customer update (customer.updated and customer.state_changed), the old address is told, and a new
 * customer session answers (Polar's CustomerEmailUpdateVerifyResponse), so the customer stays signed in. An address
 * another customer of the organization took meanwhile is a 422 on ["body","token"] and spends the token.
 */
export async function verifyEmailUpdate(deps: EmailUpdateDeps, token: string): Promise<{ token: string; organizationId: string; customerId: string }> {
  const now = deps.clock.now();
  const update = await findLiveEmailUpdate(deps.db, hashOf(deps.secret, token), now);
  if (!update || !(await claimEmailUpdate(deps.db, update.id, now))) throw invalidUpdate();
  const organizations = new Set([update.organizationId]);
  const [before] = await findCustomers(deps.db, { id: update.customerId }, [update.organizationId]);
  if (!before) throw invalidUpdate();
  try {
    await updateCustomer(deps.db, deps.clock, { readable: organizations, writable: organizations }, { id: update.customerId }, { email: update.email, email_verified: true });
  } catch (error) {
    if (error instanceof CoreError && error.kind === 'invalid') throw emailIssue('token', 'This email address is already in use.', update.email);
    throw error;
  }
  const organization = await findOrganization(deps.db, update.organizationId);
  if (organization) {
    const portalUrl = `${deps.baseUrl.replace(/\/$/, '')}/portal/${encodeURIComponent(organization.slug)}`;
    await deps.mailer.send(customerEmailChangedMail(before.email, organization.name, update.email, portalUrl));
  }
  const session = await createCustomerSession(deps.db, deps.clock, organizations, { id: update.customerId }, null);
  return { token: session.token, organizationId: update.organizationId, customerId: update.customerId };
}
