import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startDaemon } from './server.js';
import { bannerLine, heldDestination } from './banner.js';
import { createDatabase } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { createAuth } from '../core/auth/auth.js';
import { createUser } from '../core/auth/users.js';
import { isCoreError } from '../core/errors.js';
import { tillVersion } from '../core/version.js';
import { listOutboxMail } from '../core/mail/mailer.js';

type Env = Record<string, string | undefined>;

/** tilld's command line. Resolves with the exit code; `serve` resolves only once the daemon has stopped. */
export async function main(argv: string[], env: Env): Promise<number> {
  let exitCode = 0;
  const program = new Command('tilld')
    .description('Till daemon: billing and auth API, pages, and migrations')
    .version(tillVersion())
    .exitOverride()
    .showHelpAfterError();

  program
    .command('serve', { isDefault: true })
    .description('migrate the database and serve HTTP (the default)')
    .action(async () => {
      const config = loadConfig(env);
      // The stop signals are heard from the start: one that arrives while tilld migrates or starts its background work
      // (after /healthz already answers) stops it once started, instead of reaching no listener of ours.
      let requested: string | undefined;
      let stopOn: ((signal: string) => void) | undefined;
      const onTerm = () => (stopOn ? stopOn('SIGTERM') : (requested ??= 'SIGTERM'));
      const onInt = () => (stopOn ? stopOn('SIGINT') : (requested ??= 'SIGINT'));
      process.once('SIGTERM', onTerm);
      process.once('SIGINT', onInt);
      try {
        // On a terminal a person started it: one human line first (where to go), then the JSON logs, held until then.
        const terminal = process.stdout.isTTY === true;
        const held = terminal ? heldDestination(process.stdout) : undefined;
        const logger = createLogger(config.logLevel, held?.stream);
        let daemon;
        try {
          daemon = await startDaemon(config, logger);
        } finally {
          if (held && !daemon) held.release();
        }
        if (held && !requested) {
          const line = await bannerLine(daemon.db, daemon.url, daemon.baseUrl).catch(() => `tilld is listening on ${daemon.url} (JSON logs follow)`);
          process.stdout.write(`${line}\n`);
        }
        held?.release();
        await new Promise<void>((resolve) => {
          stopOn = (signal: string) => {
            logger.info({ signal }, 'shutting down');
            daemon.stop().then(resolve, (err) => {
              logger.error({ err }, 'shutdown failed');
              exitCode = 1;
              resolve();
            });
          };
          if (requested) stopOn(requested);
        });
      } finally {
        process.off('SIGTERM', onTerm);
        process.off('SIGINT', onInt);
      }
    });

  program
    .command('migrate')
    .description('apply pending database migrations, then exit')
    .action(async () => {
      const config = loadConfig(env);
      const db = createDatabase(config.database);
      try {
        const applied = await migrateToLatest(db);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await db.destroy();
      }
    });

  const users = program.command('users').description('manage accounts from the server (headless set-up)');
  users
    .command('create')
    .description('create an account; the very first account becomes an admin')
    .requiredOption('--email <email>', 'email address')
    .requiredOption('--password <password>', 'password (8 to 128 characters)')
    .option('--name <name>', 'display name (defaults to the part of the email before @)')
    .option('--admin', 'make the account an admin')
    .option('--username <username>', 'a username to sign in with (3 to 30 letters, digits, _ or .)')
    .option('--json', 'print the account as JSON')
    .action(async (opts: { email: string; password: string; name?: string; admin?: boolean; username?: string; json?: boolean }) => {
      const config = loadConfig(env);
      const db = createDatabase(config.database);
      try {
        await migrateToLatest(db);
        const auth = createAuth({ db, secret: config.secret, baseUrl: config.baseUrl, rateLimit: false });
        const user = await createUser(auth, opts);
        console.log(opts.json ? JSON.stringify(user) : `created ${user.email} (${user.role}) id=${user.id}`);
      } finally {
        await db.destroy();
      }
    });

  const mail = program.command('mail').description('the local mail outbox (mail kept when no TILL_SMTP_URL is set)');
  mail
    .command('list')
    .description('print the mail Till kept instead of sending, newest first (links in it are live: treat as secret)')
    .option('--to <email>', 'only mail to this address')
    .option('--limit <n>', 'how many to print (1 to 1000)', '20')
    .option('--json', 'print as JSON')
    .action(async (opts: { to?: string; limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
        console.error(`tilld: --limit must be a whole number from 1 to 1000; got "${opts.limit}"`);
        exitCode = 2;
        return;
      }
      const config = loadConfig(env);
      const db = createDatabase(config.database);
      try {
        await migrateToLatest(db);
        const mails = await listOutboxMail(db, { limit, to: opts.to });
        if (opts.json) {
          console.log(JSON.stringify(mails.map((m) => ({ id: m.id, to: m.to, subject: m.subject, body: m.body, created_at: m.createdAt.toISOString() }))));
        } else if (mails.length === 0) {
          console.log(config.mail.smtpUrl ? 'no mail in the outbox (TILL_SMTP_URL is set: mail goes to the SMTP server)' : 'no mail in the outbox');
        } else {
          console.log(mails.map((m) => `--- ${m.createdAt.toISOString()}  to ${m.to}\nSubject: ${m.subject}\n\n${m.body}\n`).join('\n'));
        }
      } finally {
        await db.destroy();
      }
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof ConfigError) {
      console.error(`tilld: ${error.message}`);
      return 2;
    }
    if (isCoreError(error)) {
      console.error(`tilld: ${error.message}`);
      return error.kind === 'conflict' || error.kind === 'invalid' ? 5 : 1;
    }
    console.error('tilld:', error instanceof Error ? error.message : error);
    return 1;
  }
  return exitCode;
}
