import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import type { Database } from '../core/db/database.js';
import { isDatabaseReady } from '../core/db/database.js';
import type { TillAuth } from '../core/auth/auth.js';
import { AUTH_BASE_PATH } from '../core/auth/auth.js';
import type { Logger } from './logger.js';
import type { TrustProxy } from './config.js';
import { clientIpHeader, requestLogging } from './http/request-context.js';
import { errorHandler, notFound } from './http/errors.js';
import { pageRoutes } from './pages/routes.js';
import { authHandler } from './http/auth-handler.js';
import { V1_ROUTES, v1Router } from './http/v1/router.js';
import { hotReads, type HotReadsListener } from './http/v1/hot-reads.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { FileStorage } from '../core/billing/files/storage.js';
import type { PaymentProcessor } from '../core/payments/processor.js';
import type { StripeIntegration } from '../core/payments/stripe/integration.js';
import { createSandboxProcessor } from '../core/payments/sandbox.js';
import type { Mailer } from '../core/mail/mailer.js';
import type { IntervalHistogram } from 'node:perf_hooks';
import { loopDelayHandler } from './http/loop-delay.js';

export interface AppDeps {
  db: Database;
  auth: TillAuth;
  logger: Logger;
  /** Public URL of this daemon. */
  baseUrl: string;
  version: string;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  trustProxy?: TrustProxy;
  /** The clock time-driven decisions read (tests move it). */
  clock?: Clock;
  /** Seconds a session stays fresh enough to mint access tokens (TILL_SESSION_FRESH_AGE); 0 turns the check off. */
  sessionFreshAge?: number;
  /** Where uploaded files are kept (the data directory's files/ in tilld). */
  fileStorage?: FileStorage;
  /** Largest file accepted, in bytes (TILL_MAX_FILE_SIZE). */
  maxFileSize?: number;
  /** Charges, refunds and saved cards (the sandbox processor by default). */
  payments?: PaymentProcessor;
  /** Stripe when configured (TILL_STRIPE_*): organizations not marked sandbox pay through it. */
  stripe?: StripeIntegration | null;
  /**
   * Organizations not marked sandbox are paid through Stripe only: without it, their paid checkouts are refused
   * (tilld sets it unless TILL_SANDBOX_ONLY). Absent, the sandbox pays for every organization Stripe does not.
   */
  liveRequired?: boolean;
  /** TILL_WEBHOOKS_ALLOW_PRIVATE: webhook URLs on loopback and private ranges are accepted. */
  webhooksAllowPrivate?: boolean;
  /** Mail to customers (the portal's sign-in codes, a test-clock advance's pay-link mails); the local outbox when absent. */
  mailer?: Mailer;
  /** TILL_DEBUG_LOOP_DELAY: the event loop's delay, served at GET /debug/loop-delay for benchmarks. */
  loopDelay?: IntervalHistogram;
}

/** Builds the HTTP application; listening is the caller's business (server.ts, tests). */
export function createApp(given: AppDeps): Express {
  return buildApp(given).app;
}

/**
 * tilld's request listener: the app, behind the hot lane of the two reads the reads bench measures
 * (daemon/http/v1/hot-reads.ts), which answers them as the app would, with the same bytes.
 */
export function createRequestListener(given: AppDeps): HotReadsListener {
  const { app, v1Deps, deps } = buildApp(given);
  return hotReads(app, V1_ROUTES, { v1: v1Deps, logger: deps.logger, securityHeaders: headersSetBy(securityHeaders(deps.baseUrl)), etag: app.get('etag fn') });
}

/** Helmet, as every answer of the app passes it. */
function securityHeaders(baseUrl: string): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        formAction: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        styleSrc: ["'self'"],
        scriptSrc: ["'self'"],
        upgradeInsecureRequests: null,
      },
    },
    // The daemon often runs over plain HTTP on localhost; HSTS there would break it.
    strictTransportSecurity: baseUrl.startsWith('https://'),
  });
}

/** The headers a middleware that only sets headers (helmet) sets, in its order, as name, value, name, value… */
function headersSetBy(middleware: RequestHandler): string[] {
  const headers = new Map<string, [string, string]>();
  const recorder = {
    setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), [name, String(value)]),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  };
  let passed = false;
  middleware({} as Request, recorder as unknown as Response, () => (passed = true));
  if (!passed) throw new Error('the security headers middleware did not pass the request on at once');
  return [...headers.values()].flat();
}

function buildApp(given: AppDeps) {
  // One processor for the API and the pages: the sandbox over this database unless one is given.
  const deps: AppDeps = { ...given, payments: given.payments ?? createSandboxProcessor({ db: given.db, baseUrl: given.baseUrl }) };
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy ?? false);
  app.use(requestLogging(deps.logger));
  app.use(securityHeaders(deps.baseUrl));
  app.use(clientIpHeader);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: deps.version });
  });
  if (deps.loopDelay) app.get('/debug/loop-delay', loopDelayHandler(deps.loopDelay));
  app.get('/readyz', async (_req, res) => {
    const ready = await isDatabaseReady(deps.db);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', database: ready ? 'ok' : 'unreachable', version: deps.version });
  });

  // Better Auth parses its own bodies, so it is mounted before any body parser.
  app.all(`${AUTH_BASE_PATH}/*splat`, authHandler(deps.auth, deps.bodyLimit));

  const v1Deps = { db: deps.db, auth: deps.auth, clock: deps.clock ?? systemClock, sessionFreshAge: deps.sessionFreshAge ?? 0, fileStorage: deps.fileStorage, maxFileSize: deps.maxFileSize, webhooksAllowPrivate: deps.webhooksAllowPrivate, baseUrl: deps.baseUrl, bodyLimit: deps.bodyLimit, payments: deps.payments!, livePayments: deps.stripe?.processor ?? null, liveRequired: deps.liveRequired ?? false, stripe: deps.stripe ?? null, mailer: deps.mailer };
  app.use(v1Router(v1Deps));
  app.use(pageRoutes(deps));

  app.use(notFound);
  app.use(errorHandler);
  return { app, v1Deps, deps };
}
