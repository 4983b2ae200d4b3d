import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseDatabaseUrl, type DatabaseConfig } from '../core/db/database.js';
import { DEFAULT_MAX_FILE_SIZE } from '../core/billing/files/schema.js';
import { DEFAULT_STREAM_SETTINGS } from '../core/webhooks/stream.js';
import {
  CAPTCHA_PROVIDERS,
  DEFAULT_DEVICE_CODE_SETTINGS,
  DEFAULT_JWT_SETTINGS,
  DEFAULT_SESSION_SETTINGS,
  timeStringProblem,
  type CaptchaSettings,
  type DeviceCodeSettings,
  type JwtSettings,
  type SessionSettings,
} from '../core/auth/auth.js';
import { DEFAULT_MAIL_FROM, type MailSettings } from '../core/mail/mailer.js';
import {
  DEFAULT_OIDC_NAME,
  DEFAULT_OIDC_PROVIDER_ID,
  DEFAULT_OIDC_SCOPES,
  BUILT_IN_NAMES,
  CREDENTIAL_PROVIDER_ID,
  type OAuthClientSettings,
  type OidcSettings,
  type SocialSettings,
} from '../core/auth/social.js';
import type { GitHubBenefitSettings } from '../core/integrations/github.js';
import type { DiscordBenefitSettings } from '../core/integrations/discord.js';

/** Everything tilld is configured with; read once from the environment by bin/tilld. */
export interface DaemonConfig {
  host: string;
  port: number;
  dataDir: string;
  database: DatabaseConfig;
  secret: string;
  baseUrl: string;
  session: SessionSettings;
  deviceCode: DeviceCodeSettings;
  jwt: JwtSettings;
  captcha?: CaptchaSettings;
  /** Sign-in with GitHub, Google and an OpenID Connect provider (TILL_GITHUB_*, TILL_GOOGLE_*, TILL_OIDC_*). */
  social: SocialSettings;
  rateLimit: boolean;
  /** Outgoing mail: SMTP when TILL_SMTP_URL is set, else the local outbox (`tilld mail list`). */
  mail: MailSettings;
  /** TILL_REQUIRE_EMAIL_VERIFICATION: no session until the email address is verified. */
  requireEmailVerification: boolean;
  logLevel: string;
  /** Largest request body accepted, in bytes. */
  bodyLimit: number;
  /** Express 'trust proxy': false, a hop count, or addresses/subnets of the proxies in front. */
  trustProxy: TrustProxy;
  /** Largest uploaded file accepted, in bytes. */
  maxFileSize: number;
  /** How often the job runner looks for due work (renewals, retries, expiries), in ms. */
  jobIntervalMs: number;
  /** TILL_DEBUG_LOOP_DELAY: serve the event loop's delay at GET /debug/loop-delay (benchmarks; off by default). */
  debugLoopDelay: boolean;
  /** The live event stream (/v1/cli/listen): fallback poll and heartbeat, in ms. */
  listen: { pollMs: number; heartbeatMs: number };
  /** Webhook delivery: private addresses allowed, one attempt's time limit, first retry delay, idle poll, parallel sends. */
  webhooks: { allowPrivate: boolean; timeoutMs: number; retryBaseMs: number; pollMs: number; concurrency: number };
  /** Stripe (TILL_STRIPE_*), or null: organizations not marked sandbox then cannot be paid (unless TILL_SANDBOX_ONLY). */
  stripe: StripeConfig | null;
  /**
   * The sandbox processor: how long each of its calls takes before and after it is recorded (to rehearse a slow
   * processor); `only` (TILL_SANDBOX_ONLY): this server never takes real money, every organization pays through the
   * sandbox (without it, an organization not marked sandbox needs Stripe to be paid).
   */
  sandbox: { delayMs: number; only: boolean };
  /**
   * Discord and GitHub benefits that really grant: Till's OAuth apps, through which customers connect their account
   * from the portal, and the credentials that give access (TILL_GITHUB_BENEFITS_*, TILL_DISCORD_*); null: not set up,
   * and such grants record ProviderNotConfigured.
   */
  benefits: { github: GitHubBenefitSettings | null; discord: DiscordBenefitSettings | null };
}

/** Stripe's keys; `apiBase` points the client at a local stand-in of Stripe's API, for testing only. */
export interface StripeConfig {
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
  apiBase: string | null;
}

/** A configuration mistake the operator must fix; tilld prints it and exits. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** Largest request body accepted by default: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export type TrustProxy = false | number | string[];

/**
 * Which X-Forwarded-For entries to believe. Never "all of them": Express would then take the
 * leftmost entry, which the client writes itself, and rate limits could be dodged. `true` means
 * the one proxy right in front; a number counts hops; anything else lists the proxies' addresses.
 */
function trustProxy(raw: string | undefined): TrustProxy {
  if (!raw || raw === 'false' || raw === '0') return false;
  if (raw === 'true') return 1;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw.split(',').map((entry) => entry.trim()).filter(Boolean);
}

export function loadConfig(env: Env): DaemonConfig {
  const host = env.TILL_HOST || '127.0.0.1';
  const port = integer(env, 'TILL_PORT', 4010, { min: 0, max: 65535 });
  const dataDir = env.TILL_DATA_DIR || defaultDataDir(env);
  const database = env.TILL_DATABASE_URL
    ? parseDatabaseUrl(env.TILL_DATABASE_URL)
    : ({ client: 'sqlite', filename: join(dataDir, 'till.sqlite') } as const);
  if (database.client === 'sqlite' || !env.TILL_SECRET) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = env.TILL_SECRET || loadOrCreateSecret(dataDir);
  if (secret.length < 32) {
    throw new ConfigError(env.TILL_SECRET ? 'TILL_SECRET must be at least 32 characters long' : `The secret in ${join(dataDir, 'secret')} is shorter than 32 characters: remove the file to have a new one made`);
  }
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const baseUrl = (env.TILL_BASE_URL || `http://${displayHost.includes(':') ? `[${displayHost}]` : displayHost}:${port}`).replace(/\/+$/, '');
  try {
    new URL(baseUrl);
  } catch {
    throw new ConfigError(`TILL_BASE_URL is not a URL: ${baseUrl}`);
  }
  return {
    host,
    port,
    dataDir,
    database,
    secret,
    baseUrl,
    session: {
      expiresIn: sessionExpiresIn(env),
      updateAge: integer(env, 'TILL_SESSION_UPDATE_AGE', DEFAULT_SESSION_SETTINGS.updateAge, { min: 0 }),
      freshAge: integer(env, 'TILL_SESSION_FRESH_AGE', DEFAULT_SESSION_SETTINGS.freshAge, { min: 0 }),
      cookieCacheMaxAge: integer(env, 'TILL_SESSION_COOKIE_CACHE_MAX_AGE', DEFAULT_SESSION_SETTINGS.cookieCacheMaxAge, { min: 0 }),
    },
    deviceCode: {
      ...DEFAULT_DEVICE_CODE_SETTINGS,
      expiresIn: timeString(env, 'TILL_DEVICE_CODE_EXPIRES_IN', DEFAULT_DEVICE_CODE_SETTINGS.expiresIn),
      interval: timeString(env, 'TILL_DEVICE_CODE_INTERVAL', DEFAULT_DEVICE_CODE_SETTINGS.interval),
    },
    jwt: jwtSettings(env),
    captcha: captchaSettings(env),
    social: socialSettings(env),
    rateLimit: env.TILL_RATE_LIMIT !== 'off',
    mail: mailSettings(env),
    requireEmailVerification: flag(env, 'TILL_REQUIRE_EMAIL_VERIFICATION'),
    logLevel: logLevel(env.TILL_LOG_LEVEL),
    bodyLimit: integer(env, 'TILL_BODY_LIMIT', DEFAULT_BODY_LIMIT, { min: 1024 }),
    trustProxy: trustProxy(env.TILL_TRUST_PROXY),
    maxFileSize: integer(env, 'TILL_MAX_FILE_SIZE', DEFAULT_MAX_FILE_SIZE, { min: 1 }),
    jobIntervalMs: integer(env, 'TILL_JOB_INTERVAL_MS', 1000, { min: 50, max: 3_600_000 }),
    debugLoopDelay: flag(env, 'TILL_DEBUG_LOOP_DELAY'),
    listen: {
      pollMs: integer(env, 'TILL_LISTEN_POLL_MS', DEFAULT_STREAM_SETTINGS.pollMs, { min: 50 }),
      heartbeatMs: integer(env, 'TILL_LISTEN_HEARTBEAT_MS', DEFAULT_STREAM_SETTINGS.heartbeatMs, { min: 100 }),
    },
    webhooks: {
      allowPrivate: flag(env, 'TILL_WEBHOOKS_ALLOW_PRIVATE'),
      timeoutMs: integer(env, 'TILL_WEBHOOKS_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 }),
      retryBaseMs: integer(env, 'TILL_WEBHOOKS_RETRY_BASE_MS', 2000, { min: 1, max: 1_200_000 }),
      pollMs: integer(env, 'TILL_WEBHOOKS_POLL_MS', 500, { min: 10, max: 60_000 }),
      concurrency: integer(env, 'TILL_WEBHOOKS_CONCURRENCY', 8, { min: 1, max: 256 }),
    },
    stripe: stripeSettings(env),
    sandbox: { delayMs: integer(env, 'TILL_SANDBOX_DELAY_MS', 0, { min: 0, max: 60_000 }), only: sandboxOnly(env) },
    benefits: { github: githubBenefits(env), discord: discordBenefits(env) },
  };
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function logLevel(raw: string | undefined): string {
  if (!raw) return 'info';
  if (!LOG_LEVELS.includes(raw)) throw new ConfigError(`TILL_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got "${raw}"`);
  return raw;
}

function defaultDataDir(env: Env): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'till');
}

/** A local start needs no configuration: the first start writes a random secret, later starts reuse it. */
function loadOrCreateSecret(dataDir: string): string {
  const file = join(dataDir, 'secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return secret;
}

function jwtSettings(env: Env): JwtSettings {
  const settings: JwtSettings = {
    expiresIn: integer(env, 'TILL_JWT_EXPIRES_IN', DEFAULT_JWT_SETTINGS.expiresIn, { min: 60 }),
    rotationInterval: integer(env, 'TILL_JWT_ROTATION_INTERVAL', DEFAULT_JWT_SETTINGS.rotationInterval, { min: 0 }),
    gracePeriod: integer(env, 'TILL_JWT_GRACE_PERIOD', DEFAULT_JWT_SETTINGS.gracePeriod, { min: 0 }),
  };
  // A replaced key must stay published until the last token it signed has expired.
  if (settings.gracePeriod < settings.expiresIn) {
    throw new ConfigError(`TILL_JWT_GRACE_PERIOD (${settings.gracePeriod} s) must be at least TILL_JWT_EXPIRES_IN (${settings.expiresIn} s): tokens signed by a replaced key would stop verifying before they expire`);
  }
  return settings;
}

function captchaSettings(env: Env): CaptchaSettings | undefined {
  const provider = env.TILL_CAPTCHA_PROVIDER;
  const secretKey = env.TILL_CAPTCHA_SECRET_KEY;
  if (!provider || !secretKey) return undefined;
  if (!(CAPTCHA_PROVIDERS as readonly string[]).includes(provider)) {
    throw new ConfigError(`TILL_CAPTCHA_PROVIDER must be one of ${CAPTCHA_PROVIDERS.join(', ')}; got "${provider}"`);
  }
  return { provider: provider as CaptchaSettings['provider'], secretKey, siteVerifyUrl: env.TILL_CAPTCHA_VERIFY_URL || undefined };
}

function socialSettings(env: Env): SocialSettings {
  const github = oauthClient(env, 'TILL_GITHUB');
  const google = oauthClient(env, 'TILL_GOOGLE');
  const oidc = oidcSettings(env);
  if (oidc && ((oidc.providerId === 'github' && github) || (oidc.providerId === 'google' && google))) {
    throw new ConfigError(`TILL_OIDC_PROVIDER_ID "${oidc.providerId}" is already the id of the ${BUILT_IN_NAMES[oidc.providerId]} sign-in configured by TILL_${oidc.providerId.toUpperCase()}_CLIENT_ID; choose another`);
  }
  return { ...(github ? { github } : {}), ...(google ? { google } : {}), ...(oidc ? { oidc } : {}) };
}

/** `<PREFIX>_CLIENT_ID` and `<PREFIX>_CLIENT_SECRET`: both or neither. */
function oauthClient(env: Env, prefix: string): OAuthClientSettings | undefined {
  const clientId = env[`${prefix}_CLIENT_ID`]?.trim() || undefined;
  const clientSecret = env[`${prefix}_CLIENT_SECRET`]?.trim() || undefined;
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret) {
    const [set, missing] = clientId ? [`${prefix}_CLIENT_ID`, `${prefix}_CLIENT_SECRET`] : [`${prefix}_CLIENT_SECRET`, `${prefix}_CLIENT_ID`];
    throw new ConfigError(`${set} is set but ${missing} is not: set both to turn this sign-in on, or neither`);
  }
  return { clientId, clientSecret };
}

const OIDC_VARIABLES = ['TILL_OIDC_DISCOVERY_URL', 'TILL_OIDC_CLIENT_ID', 'TILL_OIDC_CLIENT_SECRET', 'TILL_OIDC_PROVIDER_ID', 'TILL_OIDC_NAME', 'TILL_OIDC_SCOPES'];

/** Any OpenID Connect provider by its discovery URL; on when TILL_OIDC_DISCOVERY_URL is set. */
function oidcSettings(env: Env): OidcSettings | undefined {
  const discoveryUrl = env.TILL_OIDC_DISCOVERY_URL?.trim() || undefined;
  if (!discoveryUrl) {
    const stray = OIDC_VARIABLES.find((name) => env[name]?.trim());
    if (stray) throw new ConfigError(`${stray} is set but TILL_OIDC_DISCOVERY_URL is not: OpenID Connect sign-in needs the provider's discovery URL`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(discoveryUrl);
  } catch {
    throw new ConfigError(`TILL_OIDC_DISCOVERY_URL is not a URL: "${discoveryUrl}"; use e.g. https://id.example.com/.well-known/openid-configuration`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`TILL_OIDC_DISCOVERY_URL must start with https:// (or http://); got "${url.protocol}//…"`);
  }
  const client = oauthClient(env, 'TILL_OIDC');
  if (!client) throw new ConfigError('TILL_OIDC_DISCOVERY_URL is set but TILL_OIDC_CLIENT_ID and TILL_OIDC_CLIENT_SECRET are not: set the client registered at the provider');
  const providerId = env.TILL_OIDC_PROVIDER_ID?.trim() || DEFAULT_OIDC_PROVIDER_ID;
  if (!/^[a-z0-9][a-z0-9_-]{0,39}$/.test(providerId)) {
    throw new ConfigError(`TILL_OIDC_PROVIDER_ID must be lowercase letters, digits, "-" or "_" (at most 40, starting with a letter or digit); got "${providerId}"`);
  }
  if (providerId === CREDENTIAL_PROVIDER_ID) throw new ConfigError('TILL_OIDC_PROVIDER_ID cannot be "credential": that id is the password sign-in');
  const name = env.TILL_OIDC_NAME?.trim() || DEFAULT_OIDC_NAME;
  if (name.length > 60) throw new ConfigError(`TILL_OIDC_NAME must be at most 60 characters; got ${name.length}`);
  const rawScopes = env.TILL_OIDC_SCOPES?.trim();
  const scopes = rawScopes ? rawScopes.split(/[\s,]+/).filter(Boolean) : [...DEFAULT_OIDC_SCOPES];
  const badScope = scopes.find((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope));
  if (badScope !== undefined) throw new ConfigError(`TILL_OIDC_SCOPES has a scope that is not allowed: "${badScope}"`);
  if (!scopes.includes('openid')) scopes.unshift('openid');
  return { providerId, name, discoveryUrl, ...client, scopes };
}

function mailSettings(env: Env): MailSettings {
  const smtpUrl = env.TILL_SMTP_URL || undefined;
  if (smtpUrl) {
    let protocol: string;
    try {
      protocol = new URL(smtpUrl).protocol;
    } catch {
      throw new ConfigError('TILL_SMTP_URL is not a URL; use smtp://user:password@host:587 or smtps://user:password@host:465');
    }
    if (protocol !== 'smtp:' && protocol !== 'smtps:') {
      throw new ConfigError(`TILL_SMTP_URL must start with smtp:// or smtps://; got "${protocol}//…"`);
    }
  }
  const from = (env.TILL_MAIL_FROM || DEFAULT_MAIL_FROM).trim();
  if (!/^[^<>@\s]+@[^<>@\s]+$|<[^<>@\s]+@[^<>@\s]+>$/.test(from)) {
    throw new ConfigError(`TILL_MAIL_FROM must be an address, e.g. "Till <billing@example.com>" or billing@example.com; got "${from}"`);
  }
  return { smtpUrl, from };
}

/** A time string as Better Auth's device plugin reads it; its own message when it would refuse the value. */
function timeString(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const problem = timeStringProblem(raw);
  if (problem) throw new ConfigError(`${name}="${raw}": ${problem}`);
  return raw;
}

function integer(env: Env, name: string, fallback: number, range: { min?: number; max?: number }): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || (range.min !== undefined && value < range.min) || (range.max !== undefined && value > range.max)) {
    throw new ConfigError(`${name} must be a whole number${range.min !== undefined ? ` ≥ ${range.min}` : ''}${range.max !== undefined ? ` ≤ ${range.max}` : ''}; got "${raw}"`);
  }
  return value;
}

/** SPEC §9: a cookie lives at most 400 days, so a session cannot outlive its cookie. */
const MAX_COOKIE_AGE = 34_560_000;

function sessionExpiresIn(env: Env): number {
  const value = integer(env, 'TILL_SESSION_EXPIRES_IN', DEFAULT_SESSION_SETTINGS.expiresIn, { min: 60 });
  if (value > MAX_COOKIE_AGE) {
    throw new ConfigError(`TILL_SESSION_EXPIRES_IN must be at most ${MAX_COOKIE_AGE} seconds (400 days): a browser keeps a cookie no longer than that (SPEC §9); got "${env.TILL_SESSION_EXPIRES_IN}"`);
  }
  return value;
}

/** A yes/no setting: 1, true, yes or on; 0, false, no, off or unset. */
function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be 1 or 0; got "${env[name]}"`);
}

/** TILL_SANDBOX_ONLY: a server that never takes real money cannot have Stripe's keys. */
function sandboxOnly(env: Env): boolean {
  const only = flag(env, 'TILL_SANDBOX_ONLY');
  if (only && env.TILL_STRIPE_SECRET_KEY?.trim()) throw new ConfigError('TILL_SANDBOX_ONLY and TILL_STRIPE_* cannot be set together: a sandbox-only server takes no real money');
  return only;
}

/** Stripe (TILL_STRIPE_*): all three keys or none; TILL_STRIPE_API_BASE points at a local stand-in, for testing. */
function stripeSettings(env: Env): StripeConfig | null {
  const secretKey = env.TILL_STRIPE_SECRET_KEY?.trim() || undefined;
  const publishableKey = env.TILL_STRIPE_PUBLISHABLE_KEY?.trim() || undefined;
  const webhookSecret = env.TILL_STRIPE_WEBHOOK_SECRET?.trim() || undefined;
  if (!secretKey && !publishableKey && !webhookSecret) return null;
  const missing = [
    ['TILL_STRIPE_SECRET_KEY', secretKey],
    ['TILL_STRIPE_PUBLISHABLE_KEY', publishableKey],
    ['TILL_STRIPE_WEBHOOK_SECRET', webhookSecret],
  ].filter(([, value]) => !value).map(([name]) => name);
  if (missing.length > 0) throw new ConfigError(`Stripe needs all of TILL_STRIPE_SECRET_KEY, TILL_STRIPE_PUBLISHABLE_KEY and TILL_STRIPE_WEBHOOK_SECRET; missing: ${missing.join(', ')}`);
  if (!/^(sk|rk)_(test|live)_/.test(secretKey!)) throw new ConfigError('TILL_STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_…)');
  if (!/^pk_(test|live)_/.test(publishableKey!)) throw new ConfigError('TILL_STRIPE_PUBLISHABLE_KEY must be a Stripe publishable key (pk_live_… or pk_test_…)');
  if (!webhookSecret!.startsWith('whsec_')) throw new ConfigError('TILL_STRIPE_WEBHOOK_SECRET must be the signing secret of the webhook endpoint (whsec_…)');
  const apiBase = env.TILL_STRIPE_API_BASE?.trim() || null;
  if (apiBase) {
    try {
      new URL(apiBase);
    } catch {
      throw new ConfigError(`TILL_STRIPE_API_BASE is not a URL: ${apiBase}`);
    }
  }
  return { secretKey: secretKey!, publishableKey: publishableKey!, webhookSecret: webhookSecret!, apiBase };
}

/**
 * Every variable of a benefit integration, or none: `required` turn it on, `urls` (with defaults) point it at the
 * service. Answers the trimmed values, or undefined when none is set.
 */
function integrationSettings(env: Env, what: string, required: readonly string[], urls: Record<string, string>): Record<string, string> | undefined {
  const given = Object.fromEntries(required.map((name) => [name, env[name]?.trim() || undefined]));
  const missing = required.filter((name) => !given[name]);
  if (missing.length === required.length) {
    const stray = Object.keys(urls).find((name) => env[name]?.trim());
    if (stray) throw new ConfigError(`${stray} is set but ${required.join(', ')} are not: ${what} needs them`);
    return undefined;
  }
  if (missing.length > 0) throw new ConfigError(`${what} needs all of ${required.join(', ')}; missing: ${missing.join(', ')}`);
  const out: Record<string, string> = given as Record<string, string>;
  for (const [name, fallback] of Object.entries(urls)) {
    const raw = (env[name]?.trim() || fallback).replace(/\/+$/, '');
    let protocol: string;
    try {
      protocol = new URL(raw).protocol;
    } catch {
      throw new ConfigError(`${name} is not a URL: "${raw}"`);
    }
    if (protocol !== 'https:' && protocol !== 'http:') throw new ConfigError(`${name} must start with https:// (or http://); got "${raw}"`);
    out[name] = raw;
  }
  return out;
}

/** GitHub repository benefits: TILL_GITHUB_BENEFITS_CLIENT_ID/_CLIENT_SECRET (OAuth app), _TOKEN (invites). */
function githubBenefits(env: Env): GitHubBenefitSettings | null {
  const names = ['TILL_GITHUB_BENEFITS_CLIENT_ID', 'TILL_GITHUB_BENEFITS_CLIENT_SECRET', 'TILL_GITHUB_BENEFITS_TOKEN'];
  const urls = { TILL_GITHUB_API_URL: 'https://api.github.com', TILL_GITHUB_OAUTH_URL: 'https://github.com' };
  const set = integrationSettings(env, 'GitHub repository benefits', names, urls);
  if (!set) return null;
  return { clientId: set.TILL_GITHUB_BENEFITS_CLIENT_ID!, clientSecret: set.TILL_GITHUB_BENEFITS_CLIENT_SECRET!, token: set.TILL_GITHUB_BENEFITS_TOKEN!, apiUrl: set.TILL_GITHUB_API_URL!, oauthUrl: set.TILL_GITHUB_OAUTH_URL! };
}

/** Discord benefits: TILL_DISCORD_CLIENT_ID/_CLIENT_SECRET (OAuth app) and _BOT_TOKEN (the bot in the sellers' servers). */
function discordBenefits(env: Env): DiscordBenefitSettings | null {
  const names = ['TILL_DISCORD_CLIENT_ID', 'TILL_DISCORD_CLIENT_SECRET', 'TILL_DISCORD_BOT_TOKEN'];
  const urls = { TILL_DISCORD_API_URL: 'https://discord.com/api/v10', TILL_DISCORD_OAUTH_URL: 'https://discord.com' };
  const set = integrationSettings(env, 'Discord benefits', names, urls);
  if (!set) return null;
  return { clientId: set.TILL_DISCORD_CLIENT_ID!, clientSecret: set.TILL_DISCORD_CLIENT_SECRET!, botToken: set.TILL_DISCORD_BOT_TOKEN!, apiUrl: set.TILL_DISCORD_API_URL!, oauthUrl: set.TILL_DISCORD_OAUTH_URL! };
}
