import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A mail as the test SMTP server received it. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  /** The message source with quoted-printable soft breaks and escapes undone, so links read whole. */
  source: string;
}

export interface TestSmtpServer {
  /** smtp://user:pass@127.0.0.1:port — what TILL_SMTP_URL gets. */
  url: string;
  received: ReceivedMail[];
  /** Waits (polling) for a mail to `to` whose subject matches, that arrived after `skip` earlier matches. */
  waitForMail(to: string, subject: RegExp, options?: { timeoutMs?: number }): Promise<ReceivedMail>;
  close(): Promise<void>;
}

const USER = 'till';
const PASSWORD = 'smtp-test-password';

function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A real SMTP server on loopback that insists on the credentials in its URL and keeps what it is sent. */
export async function startTestSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASSWORD) return callback(null, { user: USER });
      callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const source = decodeQuotedPrintable(Buffer.concat(chunks).toString('utf8'));
        const subject = /^Subject: (.*)$/m.exec(source)?.[1]?.trim() ?? '';
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          subject,
          source,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const used = new Set<ReceivedMail>();
  return {
    url: `smtp://${USER}:${PASSWORD}@127.0.0.1:${port}`,
    received,
    async waitForMail(to, subject, { timeoutMs = 10_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mail = received.find((m) => !used.has(m) && m.to.includes(to.toLowerCase()) && subject.test(m.subject));
        if (mail) {
          used.add(mail);
          return mail;
        }
        if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject} within ${timeoutMs} ms; got: ${received.map((m) => `${m.to.join(',')}: ${m.subject}`).join(' | ') || 'nothing'}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first link in a mail that starts with `prefix` (the text part carries each link whole). */
export function linkIn(mail: ReceivedMail, prefix: string): string {
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}[^\\s"<>]*`).exec(mail.source);
  if (!match) throw new Error(`no link starting ${prefix} in mail "${mail.subject}"`);
  return match[0].replace(/&amp;/g, '&');
}
