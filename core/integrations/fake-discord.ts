import { randomBytes } from 'node:crypto';
import { credential, startFakeServer, type FakeAnswer, type FakeRequest, type FakeServer } from './fake-server.js';

export interface FakeDiscordUser {
  id: string;
  username: string;
}

/**
 * A local stand-in for the Discord endpoints Till uses, in their documented shapes: the OAuth 2 authorization code
 * flow (/oauth2/authorize, /api/v10/oauth2/token with the code or a refresh token), GET /users/@me, and a guild's
 * members and their roles through the bot. The user "signed in" on the fake consents at once. Stateful: a test asks
 * who is in a guild with which roles.
 */
export interface FakeDiscord extends FakeServer {
  clientId: string;
  clientSecret: string;
  botToken: string;
  env: Record<string, string>;
  signIn(user: FakeDiscordUser): void;
  /** A guild Till's bot is in, with its roles. */
  addGuild(guildId: string, roleIds: readonly string[]): void;
  /** The guild's members and their roles. */
  members(guildId: string): Map<string, string[]>;
  /** The customer's access tokens expire at once (the next use needs a refresh). */
  expireAccessTokens(): void;
}

const API = '/api/v10';
const unknown = (what: string, code: number): FakeAnswer => ({ status: 404, body: { message: `Unknown ${what}`, code } });

export async function startFakeDiscord(): Promise<FakeDiscord> {
  const clientId = String(100_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e9)));
  const clientSecret = randomBytes(16).toString('hex');
  const botToken = `bot.${randomBytes(16).toString('hex')}`;
  const users = new Map<string, FakeDiscordUser>();
  const codes = new Map<string, { user: FakeDiscordUser; redirectUri: string; scope: string }>();
  const accessTokens = new Map<string, { user: FakeDiscordUser; scope: string; expired: boolean }>();
  const refreshTokens = new Map<string, { user: FakeDiscordUser; scope: string }>();
  const guilds = new Map<string, { roles: Set<string>; members: Map<string, string[]> }>();
  let signedIn: FakeDiscordUser | undefined;

  const issue = (user: FakeDiscordUser, scope: string) => {
    const access = randomBytes(15).toString('hex');
    const refresh = randomBytes(15).toString('hex');
    accessTokens.set(access, { user, scope, expired: false });
    refreshTokens.set(refresh, { user, scope });
    return { access_token: access, token_type: 'Bearer', expires_in: 604800, refresh_token: refresh, scope };
  };
  const memberWire = (user: FakeDiscordUser, roles: string[]) => ({
    user: { id: user.id, username: user.username, discriminator: '0', global_name: null, avatar: null },
    nick: null,
    roles,
    joined_at: new Date().toISOString(),
    deaf: false,
    mute: false,
    flags: 0,
  });

  function handle(request: FakeRequest): FakeAnswer {
    const { method, path } = request;
    if (method === 'GET' && path === '/oauth2/authorize') {
      const redirectUri = request.query.get('redirect_uri') ?? '';
      if (request.query.get('client_id') !== clientId || request.query.get('response_type') !== 'code' || !redirectUri) {
        return { status: 400, body: { message: 'Invalid OAuth2 request' } };
      }
      if (!signedIn) return { status: 200, body: 'Log in to Discord', headers: { 'content-type': 'text/html' } };
      const code = randomBytes(10).toString('hex');
      codes.set(code, { user: signedIn, redirectUri, scope: request.query.get('scope') ?? '' });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', request.query.get('state') ?? '');
      return { status: 302, headers: { location: back.toString() } };
    }
    if (method === 'POST' && path === `${API}/oauth2/token`) {
      const basic = credential(request, 'Basic');
      const [id, secret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent) : [];
      if (id !== clientId || secret !== clientSecret) return { status: 401, body: { error: 'invalid_client' } };
      const form = (request.body ?? {}) as Record<string, string>;
      if (form.grant_type === 'authorization_code') {
        const grant = codes.get(form.code ?? '');
        codes.delete(form.code ?? '');
        if (!grant || grant.redirectUri !== form.redirect_uri) return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid "code" in request.' } };
        return { status: 200, body: issue(grant.user, grant.scope) };
      }
      if (form.grant_type === 'refresh_token') {
        const grant = refreshTokens.get(form.refresh_token ?? '');
        refreshTokens.delete(form.refresh_token ?? '');
        if (!grant) return { status: 400, body: { error: 'invalid_grant' } };
        return { status: 200, body: issue(grant.user, grant.scope) };
      }
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    }
    if (method === 'GET' && path === `${API}/users/@me`) {
      const token = accessTokens.get(credential(request, 'Bearer') ?? '');
      if (!token || token.expired) return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
      return { status: 200, body: { id: token.user.id, username: token.user.username, discriminator: '0', global_name: null, avatar: null } };
    }
    const member = path.match(/^\/api\/v10\/guilds\/(\d+)\/members\/(\d+)(?:\/roles\/(\d+))?$/);
    if (!member) return { status: 404, body: { message: '404: Not Found', code: 0 } };
    if (credential(request, 'Bot') !== botToken) return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
    const [, guildId, userId, roleId] = member as unknown as [string, string, string, string | undefined];
    const guild = guilds.get(guildId);
    if (!guild) return unknown('Guild', 10004);
    if (roleId && !guild.roles.has(roleId)) return unknown('Role', 10011);
    const roles = guild.members.get(userId);
    if (!roleId && method === 'PUT') {
      if (roles) return { status: 204 };
      const body = (request.body ?? {}) as { access_token?: string; roles?: string[] };
      const token = accessTokens.get(body.access_token ?? '');
      if (!token || token.expired || token.user.id !== userId || !token.scope.split(' ').includes('guilds.join')) {
        return { status: 403, body: { message: 'Missing Access', code: 50001 } };
      }
      const given = (body.roles ?? []).filter((role) => guild.roles.has(role));
      guild.members.set(userId, given);
      return { status: 201, body: memberWire(token.user, given) };
    }
    if (!roles) return unknown('Member', 10007);
    if (!roleId && method === 'DELETE') {
      guild.members.delete(userId);
      return { status: 204 };
    }
    if (roleId && method === 'PUT') {
      if (!roles.includes(roleId)) roles.push(roleId);
      return { status: 204 };
    }
    if (roleId && method === 'DELETE') {
      guild.members.set(userId, roles.filter((role) => role !== roleId));
      return { status: 204 };
    }
    return { status: 405, body: { message: '405: Method Not Allowed', code: 0 } };
  }

  const server = await startFakeServer(handle);
  return {
    ...server,
    clientId,
    clientSecret,
    botToken,
    env: {
      TILL_DISCORD_CLIENT_ID: clientId,
      TILL_DISCORD_CLIENT_SECRET: clientSecret,
      TILL_DISCORD_BOT_TOKEN: botToken,
      TILL_DISCORD_API_URL: `${server.url}${API}`,
      TILL_DISCORD_OAUTH_URL: server.url,
    },
    signIn(user) {
      users.set(user.id, user);
      signedIn = user;
    },
    addGuild(guildId, roleIds) {
      guilds.set(guildId, { roles: new Set(roleIds), members: new Map() });
    },
    members: (guildId) => new Map([...(guilds.get(guildId)?.members ?? new Map<string, string[]>())].map(([id, roles]) => [id, [...roles]])),
    expireAccessTokens() {
      for (const token of accessTokens.values()) token.expired = true;
    },
  };
}
