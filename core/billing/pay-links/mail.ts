import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Executor } from '../../db/database.js';
import type { JobContext } from '../../jobs/jobs.js';
import { createMailer, DEFAULT_MAIL_FROM, type MailMessage } from '../../mail/mailer.js';
import { paymentNeededMail } from '../../mail/messages.js';
import { findPayment } from '../../payments/repository.js';
import { customersByIds } from '../customers/repository.js';
import { findOrder } from '../orders/repository.js';
import { findOrganization } from '../organizations/repository.js';
import { findProductsByIds } from '../products/repository.js';
import { formatAmount } from '../shared/currencies.js';
import { findSubscription } from '../subscriptions/repository.js';
import { findPayLinkOfFailedPayment, insertPayLink, type PayLink } from './repository.js';

/** Every pay-link token starts with this, so one pasted somewhere is recognised at a glance. */
export const PAY_LINK_PREFIX = 'till_pay_';
/** How long a mailed link works (on the organization's clock); a later declined retry mails a fresh one. */
export const PAY_LINK_TTL_MS = 7 * 86_400_000;

export const hashPayLinkToken = (token: string) => createHash('sha256').update(token).digest('hex');
/** The hosted page where the customer pays: the token is in the URL only, never stored. */
export const payLinkUrl = (baseUrl: string, token: string) => `${baseUrl}/pay/${encodeURIComponent(token)}`;

/**
 * Makes a link for the order a declined try (`failedPaymentId`) left owed, and the mail that carries it, in the
 * caller's transaction. Nothing when the subscription is no longer waiting for that order (paid by a retry, ended)
 * or the try's link exists already (the job ran before). Answers the mail to send.
 */
export async function createPayLinkMail(trx: Executor, clock: Clock, baseUrl: string, failedPaymentId: string): Promise<MailMessage | undefined> {
  const failed = await findPayment(trx, failedPaymentId);
  if (!failed || failed.status !== 'failed' || !failed.subscriptionId || !failed.orderId) return undefined;
  if (await findPayLinkOfFailedPayment(trx, failed.id)) return undefined;
  const s = await findSubscription(trx, failed.subscriptionId, 'any', { forUpdate: true });
  if (!s || s.status !== 'past_due' || s.dunningOrderId !== failed.orderId) return undefined;
  const order = await findOrder(trx, failed.orderId, [s.organizationId]);
  if (!order || order.status !== 'pending') return undefined;
  const customer = (await customersByIds(trx, [s.customerId])).get(s.customerId);
  if (!customer || customer.deletedAt) return undefined;
  const organization = await findOrganization(trx, s.organizationId);
  const [product] = await findProductsByIds(trx, [s.productId]);
  const now = clock.now();
  const token = `${PAY_LINK_PREFIX}${randomBytes(32).toString('base64url')}`;
  const link: PayLink = {
    id: newId(),
    organizationId: s.organizationId,
    customerId: s.customerId,
    subscriptionId: s.id,
    orderId: order.id,
    failedPaymentId: failed.id,
    expiresAt: new Date(now.getTime() + PAY_LINK_TTL_MS),
    createdAt: now,
  };
  await insertPayLink(trx, link, hashPayLinkToken(token));
  return paymentNeededMail(customer.email, customer.name, {
    seller: organization?.name ?? 'the seller',
    product: product?.name ?? 'subscription',
    amount: formatAmount(order.totalAmount, order.currency),
    declineCode: failed.declineCode,
    declineMessage: failed.declineMessage,
    url: payLinkUrl(baseUrl, token),
    expiresAt: link.expiresAt,
  });
}

/**
 * The pay-link mail job (subject: the declined try). With the local outbox the mail is written in the link's
 * transaction (both or neither); over SMTP it is handed over once the link is committed, so no mail carries a link
 * that was rolled back. Without a mailer in the context (a core test) the local outbox takes it.
 */
export async function mailPayLink(context: JobContext, failedPaymentId: string): Promise<void> {
  const mailer = context.mailer ?? createMailer(context.db, { from: DEFAULT_MAIL_FROM });
  const message = await context.db.transaction(async (trx) => {
    const made = await createPayLinkMail(trx, context.clock, context.baseUrl, failedPaymentId);
    if (made && mailer.transport === 'outbox') await mailer.send(made, trx);
    return made;
  });
  if (message && mailer.transport === 'smtp') await mailer.send(message);
}
