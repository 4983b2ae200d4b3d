import type { Transporter } from 'nodemailer';
import type { Executor } from '../db/database.js';
import { fromDbTime, newId, toDbTime } from '../db/columns.js';

/** One message Till sends: plain text always, HTML alongside when the template has it. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** The slice of the daemon's logger the mailer writes to. */
export interface MailLog {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface MailSettings {
  /** smtp:// or smtps:// URL with credentials; absent means the local outbox. */
  smtpUrl?: string;
  /** The From header, e.g. `Till <billing@example.com>`. */
  from: string;
}

export const DEFAULT_MAIL_FROM = 'Till <no-reply@localhost>';

export interface Mailer {
  /** 'smtp' when a server is configured, else 'outbox'. */
  readonly transport: 'smtp' | 'outbox';
  /**
   * Sends a message. With SMTP the hand-over runs in the background (a slow or failing mail server
   * neither delays nor fails the request that caused the mail; a failure is logged without the body,
   * whose links are credentials). Without SMTP the message goes to the outbox table through `executor`
   * (pass the open transaction when there is one) and its text, links included, to the log at info
   * level when an account has the recipient's address: on a local install that is how the user gets the link.
   * A mail to an address no account has (an invitation) logs its text at debug only, so no address typed
   * into a form puts a link in the info log.
   */
  send(message: MailMessage, executor?: Executor): Promise<void>;
  /** Resolves once every background hand-over has finished (tests, shutdown). */
  idle(): Promise<void>;
  close(): void;
}

export function createMailer(db: Executor, settings: MailSettings, log?: MailLog): Mailer {
  if (settings.smtpUrl) return smtpMailer(settings.smtpUrl, settings.from, log);
  return {
    transport: 'outbox',
    async send(message, executor = db) {
      await recordOutboxMail(executor, message, new Date());
      if (!log) return;
      const mail = { to: message.to, subject: message.subject };
      if (await hasAccount(executor, message.to)) {
        log.info({ component: 'mail', mail: { ...mail, text: message.text } }, 'mail kept in the local outbox (no TILL_SMTP_URL)');
      } else {
        log.info({ component: 'mail', mail }, 'mail kept in the local outbox (no TILL_SMTP_URL); no account has this address, so its text is logged at debug only');
        log.debug({ component: 'mail', mail: { ...mail, text: message.text } }, 'text of the mail kept in the local outbox');
      }
    },
    idle: async () => {},
    close: () => {},
  };
}

/** Whether an account has this address (Better Auth keeps emails lower-cased). */
async function hasAccount(executor: Executor, address: string): Promise<boolean> {
  const row = await executor('user').select('id').where({ email: address.toLowerCase() }).first();
  return Boolean(row);
}

function smtpMailer(url: string, from: string, log?: MailLog): Mailer {
  // nodemailer is loaded here, only when SMTP is configured: a daemon on the local outbox never reads it (it is a
  // sizeable share of what tilld would otherwise load at start-up). Messages wait for the transport to be ready.
  const transporter: Promise<Transporter> = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(url));
  // A failure to create the transport is reported with the first message that needs it.
  transporter.catch(() => {});
  const pending = new Set<Promise<void>>();
  return {
    transport: 'smtp',
    async send(message) {
      const sending = transporter
        .then((transport) => transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html }))
        .then(
          () => {},
          (err: unknown) => {
            log?.error({ component: 'mail', mail: { to: message.to, subject: message.subject }, error: err instanceof Error ? err.message : String(err) }, 'mail could not be sent');
          },
        )
        .finally(() => pending.delete(sending));
      pending.add(sending);
    },
    async idle() {
      while (pending.size) await Promise.all([...pending]);
    },
    close: () => {
      transporter.then((transport) => transport.close(), () => {});
    },
  };
}

export interface OutboxMail {
  id: string;
  to: string;
  subject: string;
  body: string;
  createdAt: Date;
}

export async function recordOutboxMail(executor: Executor, message: MailMessage, at: Date): Promise<void> {
  await executor('mail_outbox').insert({ id: newId(), to_address: message.to, subject: message.subject, body: message.text, created_at: toDbTime(at) });
}

/** The outbox, newest first; `to` narrows it to one address (case-insensitive). */
export async function listOutboxMail(executor: Executor, options: { limit: number; to?: string }): Promise<OutboxMail[]> {
  const query = executor('mail_outbox').select('*').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(options.limit);
  if (options.to) query.whereRaw('lower(to_address) = ?', [options.to.toLowerCase()]);
  const rows = (await query) as Record<string, unknown>[];
  return rows.map((row) => ({
    id: String(row.id),
    to: String(row.to_address),
    subject: String(row.subject),
    body: String(row.body),
    createdAt: fromDbTime(row.created_at),
  }));
}
