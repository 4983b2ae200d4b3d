import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createDatabase, dialectOf, type Database } from '../core/db/database.js';
import { migrateToLatest } from '../core/db/migrate.js';
import { startSqliteCheckpointer } from '../core/db/checkpointer.js';
import { createAuth, type TillAuth } from '../core/auth/auth.js';
import type { DaemonConfig } from './config.js';
import { createRequestListener } from './app.js';
import { fewRequestsPerTurn } from './http/turns.js';
import { localFileStorage } from '../core/billing/files/local-storage.js';
import { clipped, type Logger } from './logger.js';
import { tillVersion } from '../core/version.js';
import { systemClock } from '../core/clock.js';
import { createSandboxProcessor } from '../core/payments/sandbox.js';
import { createStripeIntegration } from '../core/payments/stripe/integration.js';
import { releaseAllJobClaims, startJobRunner } from '../core/jobs/jobs.js';
import { resumeRollupBackfills } from '../core/metering/rollups.js';
import { settleLeftoversNow } from '../core/billing/payments/recover.js';
import { JOB_HANDLERS } from '../core/jobs/handlers.js';
import { closeEventHub, eventHub } from '../core/webhooks/stream.js';
import { startWebhookWorker } from './webhooks/worker.js';
import { createMailer } from '../core/mail/mailer.js';
import { startCustomerMails } from '../core/mail/customer-mails.js';
import { startIdempotencyPurge } from '../core/idempotency/service.js';
import { configureBenefitIntegrations } from '../core/integrations/configure.js';
import { startLoopDelayMonitor } from './http/loop-delay.js';

export interface RunningDaemon {
  /** The URL it actually listens on (the port is known after listen). */
  url: string;
  baseUrl: string;
  server: Server;
  db: Database;
  auth: TillAuth;
  /** Stops accepting, lets in-flight requests finish (up to a grace period), then closes the pool. */
  stop(): Promise<void>;
  /** Stops the background work (job runner, webhook delivery) while HTTP keeps serving (tests of a lost database). */
  stopBackground(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 10_000;

/** Opens the database, migrates it, and serves the app on the configured host and port. */
export async function startDaemon(config: DaemonConfig, logger: Logger, options: { db?: Database } = {}): Promise<RunningDaemon> {
  const db = options.db ?? createDatabase(config.database);
  const server = createServer();
  try {
    const applied = await migrateToLatest(db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    // Listen first: with port 0 the URL, and so the base URL in links, is known only now.
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    // A pool left open would keep the process alive: a taken port must end tilld, not hang it.
    if (!options.db) await db.destroy();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  const baseUrl = config.port === 0 && config.baseUrl.endsWith(':0') ? url : config.baseUrl;
  const payments = createSandboxProcessor({ db, baseUrl, delayMs: config.sandbox.delayMs });
  const stripe = config.stripe ? createStripeIntegration(config.stripe) : null;
  const mailer = createMailer(db, config.mail, logger);
  const auth = createAuth({
    db,
    mailer,
    requireEmailVerification: config.requireEmailVerification,
    secret: config.secret,
    baseUrl,
    session: config.session,
    deviceCode: config.deviceCode,
    jwt: config.jwt,
    captcha: config.captcha,
    social: config.social,
    rateLimit: config.rateLimit,
    log: (level, message) => logger[level]({ component: 'auth' }, clipped(message)),
  });
  // Discord and GitHub benefits: the adapters the grants' jobs call, and the OAuth apps customers connect through.
  configureBenefitIntegrations(config.benefits, config.secret);
  const loopDelay = config.debugLoopDelay ? startLoopDelayMonitor() : undefined;
  const app = createRequestListener({ loopDelay, db, auth, logger, baseUrl, version: tillVersion(), bodyLimit: config.bodyLimit, trustProxy: config.trustProxy, sessionFreshAge: config.session.freshAge, fileStorage: localFileStorage(join(config.dataDir, 'files')), maxFileSize: config.maxFileSize, webhooksAllowPrivate: config.webhooks.allowPrivate, payments, stripe, liveRequired: !config.sandbox.only, mailer });
  eventHub(db, config.listen);
  // A few requests started per event-loop turn, in arrival order: a saturated tilld still accepts new connections.
  server.on('request', fewRequestsPerTurn(app));
  // Renewals, dunning retries, expiries: due work runs every second (on PostgreSQL, shared among daemons).
  if (dialectOf(db) === 'sqlite') {
    const released = await releaseAllJobClaims(db);
    if (released) logger.info({ component: 'jobs', released }, 'released job claims left by the previous run');
    const leftovers = await settleLeftoversNow(db);
    if (leftovers) logger.info({ component: 'payments', leftovers }, 'payments and refunds left unanswered by the previous run are settled now');
  }
  // Rollups a previous run left half built (killed mid-backfill), or of meters older than the rollups, are caught up.
  const backfills = await resumeRollupBackfills(db);
  if (backfills) logger.info({ component: 'metering', backfills }, 'meter rollups are being built from the events');
  // SQLite's WAL checkpoints off the event loop, on a thread of their own.
  const checkpoints = await startSqliteCheckpointer(db);
  const jobs = startJobRunner(
    { db, clock: systemClock, payments, livePayments: stripe?.processor ?? null, baseUrl, mailer, handlers: JOB_HANDLERS, onError: (job, err) => logger.error({ err, job: { id: job.id, kind: job.kind, subject: job.subjectId } }, 'job failed') },
    { intervalMs: config.jobIntervalMs },
  );
  // Webhook delivery: the outbox to every endpoint, signed, retried, in order (on PostgreSQL, shared among daemons).
  const webhooks = await startWebhookWorker({ db, clock: systemClock, logger }, { ...config.webhooks, userAgent: `till-webhooks/${tillVersion()}` });
  // Customers' receipts and cancellation confirmations, from the outbox's events, once each.
  const customerMails = startCustomerMails({ db, mailer, clock: systemClock, baseUrl }, { intervalMs: config.jobIntervalMs, onError: (err) => logger.error({ err, component: 'mail' }, 'customer mail pass failed') });
  // Idempotency keys live 24 hours; expired ones are deleted every 10 minutes.
  const idempotency = startIdempotencyPurge(db, systemClock, { onError: (err) => logger.error({ err }, 'idempotency key purge failed') });
  logger.info({ url, database: config.database.client, version: tillVersion() }, 'tilld listening');

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Event streams never go idle: end them first, or closing would wait out the grace period.
      const streams = closeEventHub(db);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections become idle as their last response ends; close them as they do.
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      server.closeIdleConnections();
      await closed;
      await jobs.stop();
      await webhooks.stop();
      await idempotency.stop();
      await customerMails.stop();
      await mailer.idle();
      mailer.close();
      clearInterval(sweeper);
      clearTimeout(timer);
      await streams;
      await checkpoints?.stop();
      await db.destroy();
      loopDelay?.disable();
      logger.info('tilld stopped');
    })());
  const stopBackground = async () => {
    await jobs.stop();
    await webhooks.stop();
    await idempotency.stop();
    await customerMails.stop();
  };
  return { url, baseUrl, server, db, auth, stop, stopBackground };
}
