import type { AccessProvider, ConnectedAccount } from '../billing/benefit-grants/providers/provider.js';
import type { OAuthConnector, OAuthTokens } from '../billing/oauth-accounts/schema.js';
import { ConnectFailure } from '../billing/oauth-accounts/schema.js';
import { field, providerCall, providerMessage, refusal, type ProviderAnswer } from './http.js';

/** Discord benefits: Till's OAuth app (customers connect their account) and its bot, which is in the sellers' servers. */
export interface DiscordBenefitSettings {
  clientId: string;
  clientSecret: string;
  botToken: string;
  /** https://discord.com/api/v10, or a local stand-in's. OAuth tokens are exchanged at {apiUrl}/oauth2/token. */
  apiUrl: string;
  /** https://discord.com: where /oauth2/authorize lives. */
  oauthUrl: string;
}

const SERVICE = 'Discord';
/** `guilds.join` lets the bot add the customer to a server with their token. */
const SCOPES = 'identify guilds.join';
const segment = (value: unknown) => encodeURIComponent(String(value));

const unreachable = (error: unknown): never => {
  throw new ConnectFailure(error instanceof Error ? error.message : 'Discord could not be reached');
};

/** The tokens of a token answer, dated from `now`. */
function tokensOf(answer: ProviderAnswer, now: Date): OAuthTokens | undefined {
  const accessToken = field(answer.body, 'access_token');
  if (answer.status !== 200 || !accessToken) return undefined;
  const expiresIn = Number((answer.body as { expires_in?: unknown }).expires_in);
  return {
    accessToken,
    refreshToken: field(answer.body, 'refresh_token') ?? null,
    expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(now.getTime() + expiresIn * 1000) : null,
  };
}

/**
 * Customers connect their Discord account (scopes identify and guilds.join); the tokens are kept, sealed, because
 * adding the member to a guild later needs a live one.
 */
export function discordConnector(settings: DiscordBenefitSettings): OAuthConnector {
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`).toString('base64')}`;
  const token = (body: URLSearchParams) =>
    providerCall(SERVICE, `${settings.apiUrl}/oauth2/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body });
  return {
    platform: 'discord',
    authorizeUrl({ state, redirectUri }) {
      const query = new URLSearchParams({ response_type: 'code', client_id: settings.clientId, scope: SCOPES, redirect_uri: redirectUri, state, prompt: 'consent' });
      return `${settings.oauthUrl}/oauth2/authorize?${query.toString()}`;
    },
    async connect({ code, redirectUri, now }) {
      const exchange = await token(new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri })).catch(unreachable);
      const tokens = tokensOf(exchange, now);
      if (!tokens) throw new ConnectFailure(`Discord did not accept the authorization: ${field(exchange.body, 'error_description') ?? field(exchange.body, 'error') ?? `HTTP ${exchange.status}`}`);
      const user = await providerCall(SERVICE, `${settings.apiUrl}/users/@me`, { method: 'GET', headers: { authorization: `Bearer ${tokens.accessToken}` } }).catch(unreachable);
      const id = field(user.body, 'id');
      if (user.status !== 200 || !id) throw new ConnectFailure(`Discord did not tell who the account is: HTTP ${user.status}, ${providerMessage(user.body)}`);
      return { accountId: id, username: field(user.body, 'username') ?? null, tokens };
    },
    async refresh(refreshToken, now) {
      const answer = await token(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }));
      return tokensOf(answer, now);
    },
  };
}

/**
 * Guild access through the bot: PUT /guilds/{guild}/members/{user} with the customer's token and the role adds the
 * member (201); a member already there (204) gets the role with PUT …/roles/{role}. Revoking removes the role, or
 * kicks the member when the benefit says kick_member.
 */
export function discordAccess(settings: DiscordBenefitSettings): AccessProvider {
  const headers = { authorization: `Bot ${settings.botToken}` };
  const member = (target: Record<string, unknown>, userId: string) => `${settings.apiUrl}/guilds/${segment(target.guild_id)}/members/${segment(userId)}`;
  return {
    async grantAccess(target, account: ConnectedAccount) {
      const added = await providerCall(SERVICE, member(target, account.id), {
        method: 'PUT',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ access_token: await account.accessToken(), roles: [target.role_id] }),
      });
      if (added.status === 201) return {};
      if (added.status !== 204) throw refusal(SERVICE, 'add the member to the server', added);
      // Already a member: Discord ignores `roles` then, so the role is added on its own.
      const role = await providerCall(SERVICE, `${member(target, account.id)}/roles/${segment(target.role_id)}`, { method: 'PUT', headers });
      if (role.status !== 204) throw refusal(SERVICE, 'give the member the role', role);
      return {};
    },
    async revokeAccess(target, granted) {
      const userId = String(granted.granted_account_id ?? '');
      if (!userId) return;
      const url = target.kick_member === true ? member(target, userId) : `${member(target, userId)}/roles/${segment(target.role_id)}`;
      const answer = await providerCall(SERVICE, url, { method: 'DELETE', headers });
      // 404 (Unknown Member): the member left the server, so holds nothing any more.
      if (answer.status !== 204 && answer.status !== 404) throw refusal(SERVICE, target.kick_member === true ? 'remove the member from the server' : 'take the role back', answer);
    },
  };
}
