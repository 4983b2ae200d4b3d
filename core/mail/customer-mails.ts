import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { isUniqueViolation } from '../db/sql.js';
import { findOrganization } from '../billing/organizations/repository.js';
import { formatMoney } from '../webhooks/formats.js';
import type { Mailer, MailMessage } from './mailer.js';
import { cancellationMail, orderReceiptMail, renewalReceiptMail } from './messages.js';
import { insertCustomerMail, mailFloor, raiseMailFloor, unmailedEvents, type MailableEvent } from './customer-mails-repository.js';

/** The outbox events that mail the customer: a paid order (receipt, or renewal receipt) and a cancellation. */
export const CUSTOMER_MAIL_EVENTS = ['order.paid', 'subscription.canceled'] as const;

/** A transaction that writes an event is over well within this; older positions can no longer fill in. */
const SETTLED_AFTER_MS = 60_000;
const BATCH = 100;

export interface CustomerMailDeps {
  db: Database;
  mailer: Mailer;
  clock: Clock;
  baseUrl: string;
}

type Data = Record<string, unknown>;
const record = (value: unknown): Data => (value && typeof value === 'object' ? (value as Data) : {});
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const day = (value: unknown): string | null => (typeof value === 'string' && value.length >= 10 ? value.slice(0, 10) : null);

/** The mail an event sends, if any: what the customer reads is built from the event's own payload. */
export function customerMailFor(event: Pick<MailableEvent, 'payload'>, seller: { name: string; slug: string }, baseUrl: string): { kind: string; message: MailMessage } | null {
  const data = record(event.payload.data);
  const email = text(record(data.customer).email);
  if (!email) return null;
  const portalUrl = `${baseUrl.replace(/\/$/, '')}/portal/${encodeURIComponent(seller.slug)}`;
  const product = text(record(data.product).name) ?? text(data.description) ?? 'your order';
  if (event.payload.type === 'order.paid') {
    const content = {
      seller: seller.name,
      product,
      amount: formatMoney(data.total_amount, data.currency) ?? String(data.total_amount),
      receiptNumber: text(data.receipt_number) ?? text(data.invoice_number),
      portalUrl,
    };
    if (data.billing_reason === 'subscription_cycle') {
      return { kind: 'renewal_receipt', message: renewalReceiptMail(email, { ...content, nextCharge: day(record(data.subscription).current_period_end) }) };
    }
    return { kind: 'order_receipt', message: orderReceiptMail(email, content) };
  }
  if (event.payload.type === 'subscription.canceled') {
    const endsOn = data.ended_at ? null : day(data.ends_at) ?? day(data.current_period_end);
    return { kind: 'cancellation', message: cancellationMail(email, { seller: seller.name, product, endsOn, portalUrl }) };
  }
  return null;
}

/**
 * Mails the customers of the outbox events that have not had their mail yet, each exactly once across daemons:
 * the event's row in customer_mails and the mail (on the local outbox) are written in one transaction, and a
 * second daemon's insert of the same row fails instead. Answers how many mails were sent.
 */
export async function sendCustomerMails(deps: CustomerMailDeps): Promise<number> {
  const { db } = deps;
  const floor = await mailFloor(db);
  const events = await unmailedEvents(db, CUSTOMER_MAIL_EVENTS, floor, BATCH);
  const sellers = new Map<string, { name: string; slug: string } | null>();
  let sent = 0;
  for (const event of events) {
    if (!sellers.has(event.organizationId)) {
      const organization = await findOrganization(db, event.organizationId);
      sellers.set(event.organizationId, organization ? { name: organization.name, slug: organization.slug } : null);
    }
    const seller = sellers.get(event.organizationId);
    const mail = seller ? customerMailFor(event, seller, deps.baseUrl) : null;
    try {
      await db.transaction(async (trx) => {
        await insertCustomerMail(trx, event.id, mail?.kind ?? 'none', deps.clock.now());
        if (mail) await deps.mailer.send(mail.message, trx);
      });
      if (mail) sent += 1;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  await raiseMailFloor(db, CUSTOMER_MAIL_EVENTS, new Date(deps.clock.now().getTime() - SETTLED_AFTER_MS));
  return sent;
}

export interface CustomerMailWorker {
  stop(): Promise<void>;
}

/** Runs sendCustomerMails every `intervalMs` (tilld), one pass at a time. */
export function startCustomerMails(deps: CustomerMailDeps, options: { intervalMs: number; onError: (err: unknown) => void }): CustomerMailWorker {
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= sendCustomerMails(deps).then(
      () => undefined,
      (err) => options.onError(err),
    ).finally(() => {
      running = undefined;
    });
  };
  const timer = setInterval(tick, options.intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
