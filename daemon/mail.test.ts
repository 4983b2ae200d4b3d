import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { main } from './main.js';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { newUser } from './pages/testing.js';
import { signUp, uniqueEmail } from './testing/auth-client.js';
import { createOrganization } from './testing/v1.js';

let daemon: TestDaemon;

beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(() => daemon?.close());

function databaseEnv(): Record<string, string> {
  const config = daemon.database.config;
  return { TILL_DATABASE_URL: config.client === 'postgres' ? config.connectionString : config.filename, TILL_DATA_DIR: '/tmp', TILL_SECRET: 'x'.repeat(32) };
}

async function tilldOutput(argv: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args) => void out.push(args.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...args) => void err.push(args.join(' ')));
  try {
    const code = await main(argv, env);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe('mail without an SMTP server', () => {
  it('keeps the verification mail in the local outbox, logs its link, and `tilld mail list` prints it', async () => {
    const user = newUser('outbox');
    const response = await fetch(`${daemon.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: daemon.url },
      body: JSON.stringify(user),
    });
    expect(response.status).toBe(200);

    const logged = daemon.logs.find((line) => (line.mail as { to?: string } | undefined)?.to === user.email);
    expect(logged).toMatchObject({ level: 30, msg: 'mail kept in the local outbox (no TILL_SMTP_URL)', mail: { subject: 'Verify your email address for Till' } });
    expect((logged!.mail as { text: string }).text).toContain(`${daemon.baseUrl}/api/auth/verify-email?token=`);

    const listed = await tilldOutput(['mail', 'list', '--json', '--to', user.email.toUpperCase()], databaseEnv());
    expect(listed.code).toBe(0);
    const mails = JSON.parse(listed.out) as { to: string; subject: string; body: string }[];
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ to: user.email, subject: 'Verify your email address for Till' });
    const link = /http\S*verify-email\?token=\S+/.exec(mails[0]!.body)![0];

    // The kept link works: it verifies the address.
    const followed = await fetch(link, { redirect: 'manual' });
    expect(followed.status).toBe(302);
    expect(followed.headers.get('location')).toMatch(/^\/email-verified/);

    const text = await tilldOutput(['mail', 'list', '--to', user.email], databaseEnv());
    expect(text.out).toContain(`to ${user.email}`);
    expect(text.out).toContain('Subject: Verify your email address for Till');
  });

  it('logs a reset link only for an address that has an account: one typed for no account logs no link', async () => {
    const owner = await signUp(daemon.url);
    const requestReset = (email: string) =>
      fetch(`${daemon.url}/api/auth/request-password-reset`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: daemon.url },
        body: JSON.stringify({ email, redirectTo: '/reset-password' }),
      });
    const stranger = uniqueEmail('nobody');
    expect((await requestReset(stranger)).status).toBe(200);
    expect((await requestReset(owner.user.email)).status).toBe(200);
    // The owner's link is logged (it is how a local install gets it); the two requests answer alike.
    await expect.poll(() => daemon.logs.some((line) => String((line.mail as { text?: string } | undefined)?.text ?? '').includes('/reset-password?token='))).toBe(true);
    const logged = JSON.stringify(daemon.logs);
    expect(logged).not.toContain(stranger);
    const resetLines = daemon.logs.filter((line) => (line.mail as { subject?: string } | undefined)?.subject?.startsWith('Reset'));
    expect(resetLines.map((line) => (line.mail as { to: string }).to)).toEqual([owner.user.email]);

    // An invitation goes to an address no account has: kept in the outbox, logged without its text (debug only).
    const organizationId = await createOrganization(owner, 'Mail Org');
    const invitee = uniqueEmail('invitee');
    const invited = await owner.client.post('/organization/invite-member', { email: invitee, role: 'member', organizationId });
    expect(invited.status).toBe(200);
    await expect.poll(() => daemon.logs.some((line) => (line.mail as { to?: string } | undefined)?.to === invitee)).toBe(true);
    const inviteLines = daemon.logs.filter((line) => (line.mail as { to?: string } | undefined)?.to === invitee);
    expect(inviteLines).toHaveLength(1);
    expect(inviteLines[0]).toMatchObject({ level: 30, mail: { to: invitee } });
    expect(inviteLines[0]!.mail).not.toHaveProperty('text');
    expect(JSON.stringify(daemon.logs)).not.toContain('/invitations/');
    const listed = await tilldOutput(['mail', 'list', '--json', '--to', invitee], databaseEnv());
    expect((JSON.parse(listed.out) as { body: string }[])[0]!.body).toContain('/invitations/');
  });

  it('refuses a bad --limit with exit code 2', async () => {
    const listed = await tilldOutput(['mail', 'list', '--limit', '0'], databaseEnv());
    expect(listed.code).toBe(2);
    expect(listed.err).toContain('--limit must be a whole number from 1 to 1000');
  });

  it('refuses an SMTP URL that is not smtp:// or smtps://, and a From without an address', () => {
    const base = { TILL_DATA_DIR: '/tmp/till-mail-config', TILL_SECRET: 'x'.repeat(32) };
    expect(() => loadConfig({ ...base, TILL_SMTP_URL: 'http://mail.example.com' })).toThrow(new ConfigError('TILL_SMTP_URL must start with smtp:// or smtps://; got "http://…"'));
    expect(() => loadConfig({ ...base, TILL_SMTP_URL: 'not a url' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, TILL_MAIL_FROM: 'Till' })).toThrow(/TILL_MAIL_FROM must be an address/);
    expect(() => loadConfig({ ...base, TILL_REQUIRE_EMAIL_VERIFICATION: 'maybe' })).toThrow(/TILL_REQUIRE_EMAIL_VERIFICATION must be 1 or 0/);
    expect(loadConfig({ ...base, TILL_SMTP_URL: 'smtps://u:p@mail.example.com:465', TILL_MAIL_FROM: 'Till <billing@example.com>' }).mail).toEqual({
      smtpUrl: 'smtps://u:p@mail.example.com:465',
      from: 'Till <billing@example.com>',
    });
  });
});
