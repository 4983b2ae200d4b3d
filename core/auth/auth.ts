import { betterAuth, getCurrentAdapter, type BetterAuthOptions, type BetterAuthPlugin, type DBAdapter } from 'better-auth';
import { APIError, createAuthMiddleware, getSessionFromCtx, isAPIError } from 'better-auth/api';
import { admin } from 'better-auth/plugins/admin';
import { bearer } from 'better-auth/plugins/bearer';
import { captcha } from 'better-auth/plugins/captcha';
import { deviceAuthorization, deviceAuthorizationOptionsSchema } from 'better-auth/plugins/device-authorization';
import { jwt } from 'better-auth/plugins/jwt';
import { organization } from 'better-auth/plugins/organization';
import { username } from 'better-auth/plugins/username';
import type { Database, Executor } from '../db/database.js';
import { adminAc, adminRoles, organizationAc, organizationRoles } from './access.js';
import { currentAuthTransaction, knexAdapter } from './knex-adapter.js';
import { dialectOf } from '../db/database.js';
import { DEVICE_CLIENTS } from './device-clients.js';
import type { Mailer } from '../mail/mailer.js';
import { generateRandomString } from 'better-auth/crypto';
import { changeEmailMail, deleteAccountMail, invitationMail, resetPasswordMail, verificationMail } from '../mail/messages.js';
import { nameProblem, slugProblem } from '../billing/organizations/slug.js';
import { isValidDisplayUsername, isValidUsername, USERNAME_LENGTH } from './usernames.js';
import { hardening } from './hardening.js';
import { assertUserFields } from './user-fields.js';
import { ACCOUNT_LINKING, oidcPlugin, socialProvidersOption, type SocialSettings } from './social.js';

export const AUTH_BASE_PATH = '/api/auth';

/** PostgreSQL advisory-lock key that serialises account creation ("till" in ASCII). */
const FIRST_ADMIN_LOCK = 0x74696c6c;

/** Header the daemon sets from the socket address, so rate limits key on the real client. */
export const CLIENT_IP_HEADER = 'x-till-client-ip';

export const CAPTCHA_PROVIDERS = ['cloudflare-turnstile', 'google-recaptcha', 'hcaptcha', 'captchafox'] as const;
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number];

export interface SessionSettings {
  /** Seconds a session lives. */
  expiresIn: number;
  /** Seconds after which a used session is extended. */
  updateAge: number;
  /** Seconds a session stays fresh for sensitive actions; 0 disables the check. */
  freshAge: number;
  /** Seconds the signed session cookie cache is trusted. */
  cookieCacheMaxAge: number;
}

export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  expiresIn: 7 * 24 * 3600,
  updateAge: 24 * 3600,
  freshAge: 24 * 3600,
  cookieCacheMaxAge: 5 * 60,
};

/** Password length limits for every way an account is made (sign-up, admin, `tilld users create`). */
export const PASSWORD_LENGTH = { min: 8, max: 128 } as const;

export interface DeviceCodeSettings {
  /** Time string, e.g. '30m'. */
  expiresIn: string;
  /** Time string, e.g. '5s'. */
  interval: string;
  deviceCodeLength: number;
  userCodeLength: number;
}

export const DEFAULT_DEVICE_CODE_SETTINGS: DeviceCodeSettings = {
  expiresIn: '30m',
  interval: '5s',
  deviceCodeLength: 40,
  userCodeLength: 8,
};

/**
 * Better Auth's own verdict on a device-code time string ('30m', '5s', '1h'…): its message when the
 * plugin would refuse the value, else undefined. Lets start-up name the setting instead of dumping a ZodError.
 */
export function timeStringProblem(value: string): string | undefined {
  const result = deviceAuthorizationOptionsSchema.shape.expiresIn.safeParse(value);
  return result.success ? undefined : result.error.issues[0]?.message;
}

/** Signed tokens of GET /api/auth/token and the keys published at /api/auth/jwks (SPEC §9). */
export interface JwtSettings {
  /** Seconds a signed token lives. */
  expiresIn: number;
  /** Seconds a signing key signs before a new one replaces it; 0 never rotates. */
  rotationInterval: number;
  /** Seconds a replaced key stays published, so tokens it signed still verify; at least `expiresIn`. */
  gracePeriod: number;
}

export const DEFAULT_JWT_SETTINGS: JwtSettings = {
  expiresIn: 3600,
  rotationInterval: 30 * 24 * 3600,
  gracePeriod: 7 * 24 * 3600,
};

export interface CaptchaSettings {
  provider: CaptchaProvider;
  secretKey: string;
  /** Points verification at another URL (a local fake in tests). */
  siteVerifyUrl?: string;
}

export interface AuthSettings {
  db: Database;
  secret: string;
  /** Public URL of tilld, e.g. http://127.0.0.1:4010. */
  baseUrl: string;
  trustedOrigins?: string[];
  session?: Partial<SessionSettings>;
  deviceCode?: Partial<DeviceCodeSettings>;
  captcha?: CaptchaSettings;
  jwt?: Partial<JwtSettings>;
  /** Sends verification, password-reset, change-of-email and invitation mail; without it none of those flows is offered. */
  mailer?: Mailer;
  /** Sign-in (and sign-up's session) wait until the email address is verified (EMAIL_NOT_VERIFIED). */
  requireEmailVerification?: boolean;
  /** Rate limiting of sign-in, sign-up and device verification; on unless turned off. */
  rateLimit?: boolean;
  /** GitHub, Google and an OpenID Connect provider, each on when its client is configured. */
  social?: SocialSettings;
  /** Receives Better Auth's own log lines. */
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string, ...args: unknown[]) => void;
}

/**
 * Guards the organization plugin leaves open: organization names and slugs follow Till's one rule
 * (core/billing/organizations/slug.ts) as they do on /v1, create-team takes an empty name (SPEC §5: at least 1
 * character), and cancel-invitation would turn an accepted or rejected invitation into a canceled one.
 */
const organizationHooks = {
  beforeCreateOrganization: async ({ organization }: { organization: { name?: string; slug?: string } }) => assertOrganizationFields(organization),
  beforeUpdateOrganization: async ({ organization }: { organization: { name?: string; slug?: string } }) => assertOrganizationFields(organization),
  beforeCreateTeam: async ({ team }: { team: { name: string } }) => assertTeamName(team.name),
  beforeUpdateTeam: async ({ updates }: { updates: { name?: string } }) => {
    if (updates.name !== undefined) assertTeamName(updates.name);
  },
  beforeCancelInvitation: async ({ invitation }: { invitation: { status: string } }) => {
    if (invitation.status !== 'pending') {
      throw new APIError('BAD_REQUEST', { code: 'INVITATION_NOT_PENDING', message: `Only a pending invitation can be canceled; this one is ${invitation.status}` });
    }
  },
};

/**
 * SPEC §5/§8: revoking a token that is not the caller's is refused, and an unknown token is a 400
 * "Session not found". A session may also be named by its id (see core/auth/hardening.ts). Better Auth answers {status: true} to both and deletes nothing, which tells a
 * caller nothing; this check runs first and says what happened.
 */
const revokeSessionGuard = createAuthMiddleware(async (ctx) => {
  const token = (ctx.body as { token?: unknown } | undefined)?.token;
  if (typeof token !== 'string') return; // Better Auth's own validation answers VALIDATION_ERROR.
  const callerId = await callerUserId(ctx);
  if (!callerId) return; // Better Auth answers 401 itself.
  const target = await ctx.context.internalAdapter.findSession(token);
  if (!target) {
    // Lists name sessions by id (they carry no tokens): an id of one of the caller's own sessions revokes it.
    const own = (await ctx.context.internalAdapter.listSessions(callerId)).find((session) => session.id === token);
    if (own) return { context: { body: { token: own.token } } };
    throw new APIError('BAD_REQUEST', { code: 'SESSION_NOT_FOUND', message: 'Session not found' });
  }
  if (target.session.userId !== callerId) {
    throw new APIError('UNAUTHORIZED', { code: 'UNAUTHORIZED', message: 'You can only revoke your own sessions' });
  }
});

/**
 * Who calls, from inside a before hook. Hooks see the request before the bearer plugin's header
 * conversion is applied, so a Bearer token is looked up here directly (its part before the signature
 * is the session token); otherwise the session cookie answers.
 */
async function callerUserId(ctx: Parameters<Parameters<typeof createAuthMiddleware>[0]>[0]): Promise<string | undefined> {
  return (await callerSession(ctx))?.userId;
}

async function callerSession(ctx: Parameters<Parameters<typeof createAuthMiddleware>[0]>[0]): Promise<{ userId: string; createdAt: Date } | undefined> {
  const bearer = ctx.headers?.get('authorization')?.match(/^Bearer\s+(.+)$/i)?.[1];
  if (bearer) {
    const found = await ctx.context.internalAdapter.findSession(decodeURIComponent(bearer).split('.')[0]!);
    return found && new Date(found.session.expiresAt) > new Date() ? { userId: found.session.userId, createdAt: new Date(found.session.createdAt) } : undefined;
  }
  const found = await getSessionFromCtx(ctx);
  return found ? { userId: found.user.id, createdAt: new Date(found.session.createdAt) } : undefined;
}

/**
 * SPEC §8 delete-user rule. `{password}`: Better Auth checks it and the account goes at once (a one-use
 * deletion token is added so it does not mail a link instead). `{token}` (the mailed link): goes. No password
 * from an account that has one: 400 USER_ALREADY_HAS_PASSWORD, unless the caller asks for confirmation by
 * email by naming where the link should land (`{callbackURL}`). An account without a password (social sign-in
 * only) always confirms by email. An organization's last owner is refused before any mail is sent.
 */
const deleteUserGuard = (db: Database) =>
  createAuthMiddleware(async (ctx) => {
    const body = (ctx.body ?? {}) as { password?: unknown; token?: unknown; callbackURL?: unknown };
    if (typeof body.token === 'string') return;
    const caller = await callerSession(ctx);
    if (!caller) return; // Better Auth answers 401 itself.
    const userId = caller.userId;
    await assertNotLastOwner(currentAuthTransaction() ?? db, userId);
    if (typeof body.password === 'string' && body.password) {
      const token = generateRandomString(32, '0-9', 'a-z');
      await ctx.context.internalAdapter.createVerificationValue({ value: userId, identifier: `delete-account-${token}`, expiresAt: new Date(Date.now() + 60_000) });
      return { context: { body: { ...body, token } } };
    }
    const accounts = await ctx.context.internalAdapter.findAccounts(userId);
    const hasPassword = accounts.some((account) => account.providerId === 'credential' && account.password);
    if (hasPassword && typeof body.callbackURL !== 'string') {
      // A stale session is told to re-authenticate first, as Better Auth words it.
      const freshAge = ctx.context.sessionConfig.freshAge * 1000;
      if (freshAge > 0 && Date.now() - caller.createdAt.getTime() >= freshAge) {
        throw new APIError('BAD_REQUEST', { code: 'SESSION_EXPIRED', message: 'Session expired. Re-authenticate to perform this action.' });
      }
      throw new APIError('BAD_REQUEST', { code: 'USER_ALREADY_HAS_PASSWORD', message: 'User already has a password. Provide that to delete the account.' });
    }
  });

/** Refuses to delete an account that is the only owner of an organization: it would be left ownerless. */
async function assertNotLastOwner(db: Database | Executor, userId: string): Promise<void> {
  const owned = (await db('member as m')
    .join('organization as o', 'o.id', 'm.organizationId')
    .where('m.userId', userId)
    .select('o.id', 'o.name', 'm.role')) as { id: string; name: string; role: string }[];
  const isOwner = (role: string) => role.split(',').map((r) => r.trim()).includes('owner');
  for (const organization of owned.filter((row) => isOwner(row.role))) {
    const others = (await db('member').where('organizationId', organization.id).whereNot('userId', userId).select('role')) as { role: string }[];
    if (!others.some((row) => isOwner(row.role))) {
      throw new APIError('BAD_REQUEST', {
        code: 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
        message: `You are the only owner of the organization "${organization.name}": make another member an owner, or delete the organization, before deleting your account`,
      });
    }
  }
}

/** Till's own checks on Better Auth's endpoints. */
const tillGuards = (db: Database) =>
  ({
    id: 'till-guards',
    hooks: {
      before: [
        { matcher: (ctx: { path?: string }) => ctx.path === '/revoke-session', handler: revokeSessionGuard },
        { matcher: (ctx: { path?: string }) => ctx.path === '/delete-user', handler: deleteUserGuard(db) },
      ],
    },
  }) satisfies BetterAuthPlugin;

/** Refuses a name or slug that /v1 would refuse, with Better Auth's error shape. */
function assertOrganizationFields(organization: { name?: unknown; slug?: unknown }) {
  if (organization.name !== undefined) {
    const problem = typeof organization.name === 'string' ? nameProblem(organization.name) : 'The name must be text';
    if (problem) throw new APIError('BAD_REQUEST', { code: 'INVALID_ORGANIZATION_NAME', message: problem });
  }
  if (organization.slug !== undefined) {
    const problem = typeof organization.slug === 'string' ? slugProblem(organization.slug) : 'The slug must be text';
    if (problem) throw new APIError('BAD_REQUEST', { code: 'INVALID_ORGANIZATION_SLUG', message: problem });
  }
}

function assertTeamName(name: string) {
  if (name.trim().length < 1) throw new APIError('BAD_REQUEST', { code: 'VALIDATION_ERROR', message: 'Team name must be at least 1 character' });
}

/**
 * The plugin list as a tuple, captcha last when configured: Better Auth infers the user and session
 * fields (role, activeOrganizationId…) from the tuple's element types, which a plain array would lose.
 */
function tillPlugins(settings: AuthSettings, device: DeviceCodeSettings) {
  const core = [
    hardening({ minPasswordLength: PASSWORD_LENGTH.min }),
    bearer(),
    tillGuards(settings.db),
    deviceAuthorization({
      expiresIn: device.expiresIn as '30m',
      interval: device.interval as '5s',
      deviceCodeLength: device.deviceCodeLength,
      userCodeLength: device.userCodeLength,
      verificationUri: new URL('/device', settings.baseUrl).toString(),
      validateClient: (clientId) => DEVICE_CLIENTS.has(clientId),
    }),
    admin({ ac: adminAc, roles: adminRoles, defaultRole: 'user', adminRoles: ['admin'] }),
    organization({
      ac: organizationAc,
      roles: organizationRoles,
      creatorRole: 'owner',
      teams: { enabled: true },
      dynamicAccessControl: { enabled: true },
      organizationHooks,
      ...(settings.mailer ? { sendInvitationEmail: invitationSender(settings.mailer, settings.baseUrl) } : {}),
    }),
    jwtPlugin({ ...DEFAULT_JWT_SETTINGS, ...settings.jwt }),
    username({
      minUsernameLength: USERNAME_LENGTH.min,
      maxUsernameLength: USERNAME_LENGTH.max,
      usernameValidator: isValidUsername,
      displayUsernameValidator: isValidDisplayUsername,
    }),
    oidcPlugin(settings.social, settings.requireEmailVerification ?? false),
  ] as const;
  if (!settings.captcha) return [...core] as [...typeof core];
  const verifier = captcha({
    provider: settings.captcha.provider,
    secretKey: settings.captcha.secretKey,
    siteVerifyURLOverride: settings.captcha.siteVerifyUrl,
    // Better Auth's default list leaves out the username plugin's sign-in.
    endpoints: ['/sign-up/email', '/sign-in/email', '/sign-in/username', '/request-password-reset'],
  } as Parameters<typeof captcha>[0]);
  return [...core, verifier] as [...typeof core, typeof verifier];
}

/**
 * Better Auth's jwt plugin: EdDSA keys, private halves encrypted with the secret (its default),
 * issuer and audience the base URL (its default). The lifetime goes as a time span: a number would
 * be taken as an absolute `exp`. /get-session does not sign a token on every call (the daemon's
 * own authentication calls it per request); clients ask /token when they need one.
 */
function jwtPlugin(settings: JwtSettings) {
  return jwt({
    jwt: { expirationTime: `${settings.expiresIn}s` },
    jwks: { rotationInterval: settings.rotationInterval || undefined, gracePeriod: settings.gracePeriod },
    disableSettingJwtHeader: true,
  });
}

/** Seconds a verification, reset or change-of-email link stays valid. */
export const EMAIL_TOKEN_SECONDS = 3600;

/** Where Better Auth's verify-email link sends the browser afterwards, when the caller named no page. */
export const EMAIL_LANDING_PATH = '/email-verified';

/**
 * Better Auth's verify-email link, pointed at Till's landing page when the request that caused it named
 * no callback (an API sign-up): the browser then sees what happened instead of the bare home page.
 */
function landingLink(url: string, baseUrl: string): string {
  const link = new URL(url);
  const callback = link.searchParams.get('callbackURL');
  if (!callback || callback === '/' || callback === baseUrl || callback === `${baseUrl}/`) link.searchParams.set('callbackURL', EMAIL_LANDING_PATH);
  return link.toString();
}

/** The reset link goes straight to Till's form; its token is checked (once) when the new password is sent. */
function resetSender(mailer: Mailer, baseUrl: string) {
  return async ({ user, token }: { user: { email: string; name: string }; token: string }) => {
    const link = new URL('/reset-password', baseUrl);
    link.searchParams.set('token', token);
    await mailer.send(resetPasswordMail(user.email, user.name, link.toString(), EMAIL_TOKEN_SECONDS / 60), currentAuthTransaction());
  };
}

function invitationSender(mailer: Mailer, baseUrl: string) {
  return async (data: { id: string; role: string; email: string; organization: { name: string }; inviter: { user: { name: string; email: string } } }) => {
    const link = new URL(`/invitations/${encodeURIComponent(data.id)}`, baseUrl).toString();
    const inviter = data.inviter.user.name || data.inviter.user.email;
    await mailer.send(invitationMail(data.email, inviter, data.organization.name, data.role, link), currentAuthTransaction());
  };
}

/** Builds the Better Auth options for Till: knex storage and the plugin set of SPEC §5–§9. */
export function authOptions(settings: AuthSettings) {
  const session = { ...DEFAULT_SESSION_SETTINGS, ...settings.session };
  const device = { ...DEFAULT_DEVICE_CODE_SETTINGS, ...settings.deviceCode };
  for (const key of ['expiresIn', 'interval'] as const) {
    const problem = timeStringProblem(device[key]);
    if (problem) throw new Error(`deviceCode.${key} "${device[key]}": ${problem}`);
  }
  const plugins = tillPlugins(settings, device);
  const mailer = settings.mailer;
  const rateLimited = settings.rateLimit ?? true;
  return {
    appName: 'Till',
    baseURL: settings.baseUrl,
    basePath: AUTH_BASE_PATH,
    secret: settings.secret,
    trustedOrigins: settings.trustedOrigins,
    database: knexAdapter(settings.db),
    socialProviders: socialProvidersOption(settings.social, settings.requireEmailVerification ?? false),
    account: { accountLinking: ACCOUNT_LINKING },
    emailAndPassword: {
      enabled: true,
      autoSignIn: true,
      minPasswordLength: PASSWORD_LENGTH.min,
      maxPasswordLength: PASSWORD_LENGTH.max,
      requireEmailVerification: settings.requireEmailVerification ?? false,
      resetPasswordTokenExpiresIn: EMAIL_TOKEN_SECONDS,
      // Whoever knew the old password is signed out everywhere once it is replaced.
      revokeSessionsOnPasswordReset: true,
      ...(mailer ? { sendResetPassword: resetSender(mailer, settings.baseUrl) } : {}),
    },
    emailVerification: mailer
      ? {
          sendVerificationEmail: async ({ user, url }: { user: { email: string; name: string }; url: string }) =>
            mailer.send(verificationMail(user.email, user.name, landingLink(url, settings.baseUrl)), currentAuthTransaction()),
          sendOnSignUp: true,
          sendOnSignIn: settings.requireEmailVerification ?? false,
          autoSignInAfterVerification: true,
          expiresIn: EMAIL_TOKEN_SECONDS,
        }
      : undefined,
    user: {
      // SPEC §7/§8 POST /delete-user: the password, or confirmation by email (deleteUserGuard).
      deleteUser: {
        enabled: true,
        // Also checked when the mailed link is followed: ownership may have changed since the mail.
        beforeDelete: async (user: { id: string }) => assertNotLastOwner(currentAuthTransaction() ?? settings.db, user.id),
        ...(mailer
          ? {
              sendDeleteAccountVerification: async ({ user, url }: { user: { email: string; name: string }; url: string }) => {
                const link = new URL(url);
                const callback = link.searchParams.get('callbackURL');
                if (!callback || callback === '/') link.searchParams.set('callbackURL', '/sign-in?notice=account-deleted');
                await mailer.send(deleteAccountMail(user.email, user.name, link.toString()), currentAuthTransaction());
              },
            }
          : {}),
      },
      changeEmail: mailer
        ? {
            enabled: true,
            sendChangeEmailConfirmation: async ({ user, newEmail, url }: { user: { email: string; name: string }; newEmail: string; url: string }) =>
              mailer.send(changeEmailMail(user.email, user.name, newEmail, landingLink(url, settings.baseUrl)), currentAuthTransaction()),
          }
        : { enabled: false },
    },
    session: {
      expiresIn: session.expiresIn,
      updateAge: session.updateAge,
      freshAge: session.freshAge,
      cookieCache: { enabled: session.cookieCacheMaxAge > 0, maxAge: session.cookieCacheMaxAge },
    },
    rateLimit: {
      enabled: rateLimited,
      storage: 'memory',
      window: 60,
      max: 300,
      customRules: {
        '/sign-in/*': { window: 60, max: 10 },
        '/sign-up/*': { window: 60, max: 10 },
        // RFC 8628 §5.1: an 8-character user code must not be guessable by brute force.
        '/device': { window: 60, max: 10 },
        '/device/approve': { window: 60, max: 10 },
        '/device/deny': { window: 60, max: 10 },
        '/device/token': { window: 60, max: 30 },
      },
    },
    advanced: {
      ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] },
      useSecureCookies: settings.baseUrl.startsWith('https://'),
      // Better Auth skips the Origin/CSRF check whenever NODE_ENV=test; pin it on so tests see production.
      disableOriginCheck: false,
    },
    databaseHooks: {
      user: {
        create: {
          // The very first account of an installation administers it.
          before: async (user, ctx) => {
            assertUserFields(user);
            // Count through Better Auth's adapter: user creation runs in its transaction, which on
            // SQLite holds the pool's only connection, so a query on `settings.db` would wait forever.
            const adapter = await getCurrentAdapter(ctx?.context.adapter as DBAdapter);
            // Two first sign-ups at once must not both see an empty table. SQLite's single connection
            // serialises them already; on PostgreSQL a transaction-scoped lock does, until the winner commits.
            const trx = currentAuthTransaction();
            if (trx && dialectOf(trx) === 'postgres') await trx.raw('select pg_advisory_xact_lock(?)', [FIRST_ADMIN_LOCK]);
            const existing = await adapter.count({ model: 'user' });
            return existing > 0 ? { data: user } : { data: { ...user, role: 'admin' } };
          },
        },
        update: {
          before: async (user) => {
            assertUserFields(user);
            return { data: user };
          },
        },
      },
    },
    onAPIError: {
      // A provider callback that fails before its own error page is known (a lost or forged state) shows
      // the reason on the sign-in page rather than Better Auth's bare /api/auth/error.
      errorURL: new URL('/sign-in', settings.baseUrl).toString(),
      // Without this, Better Auth prints every 4xx answer to the console as an ERROR line; the
      // daemon's request log already records those. Only failures that are bugs are worth a log line.
      onError: (error) => {
        if (isAPIError(error) && error.statusCode < 500) return;
        settings.log?.('error', `auth request failed: ${error instanceof Error ? error.message : String(error)}`);
      },
    },
    logger: settings.log
      ? { level: 'warn', log: (level, message, ...args) => settings.log!(level, message, ...args) }
      : { disabled: true },
    plugins,
  } satisfies BetterAuthOptions;
}

export type TillAuth = ReturnType<typeof createAuth>;

/** Creates the Better Auth instance Till serves at /api/auth. */
export function createAuth(settings: AuthSettings) {
  return betterAuth(authOptions(settings));
}
