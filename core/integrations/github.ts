import type { AccessProvider, ConnectedAccount } from '../billing/benefit-grants/providers/provider.js';
import { GrantFailure } from '../billing/benefit-grants/providers/provider.js';
import type { OAuthConnector } from '../billing/oauth-accounts/schema.js';
import { ConnectFailure } from '../billing/oauth-accounts/schema.js';
import { field, providerCall, providerMessage, refusal } from './http.js';

/** GitHub benefits: Till's OAuth app (customers connect their account) and the token that invites to repositories. */
export interface GitHubBenefitSettings {
  clientId: string;
  clientSecret: string;
  /** A token allowed to manage the collaborators of the benefits' repositories (Administration: write). */
  token: string;
  /** https://api.github.com, or a GitHub Enterprise / local stand-in's API. */
  apiUrl: string;
  /** https://github.com: where /login/oauth/authorize and /login/oauth/access_token live. */
  oauthUrl: string;
}

const SERVICE = 'GitHub';
const API_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'till' };
const segment = (value: unknown) => encodeURIComponent(String(value));

/** Customers connect their GitHub account: only who they are is read (no scope), and the user token is not kept. */
export function githubConnector(settings: GitHubBenefitSettings): OAuthConnector {
  return {
    platform: 'github',
    authorizeUrl({ state, redirectUri }) {
      const query = new URLSearchParams({ client_id: settings.clientId, redirect_uri: redirectUri, state, allow_signup: 'true' });
      return `${settings.oauthUrl}/login/oauth/authorize?${query.toString()}`;
    },
    async connect({ code, redirectUri }) {
      const exchange = await providerCall(SERVICE, `${settings.oauthUrl}/login/oauth/access_token`, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'till' },
        body: new URLSearchParams({ client_id: settings.clientId, client_secret: settings.clientSecret, code, redirect_uri: redirectUri }),
      }).catch(unreachable);
      // GitHub answers a refused code with 200 and {error, error_description}.
      const accessToken = field(exchange.body, 'access_token');
      if (exchange.status !== 200 || !accessToken) {
        throw new ConnectFailure(`GitHub did not accept the authorization: ${field(exchange.body, 'error_description') ?? field(exchange.body, 'error') ?? `HTTP ${exchange.status}`}`);
      }
      const user = await providerCall(SERVICE, `${settings.apiUrl}/user`, { method: 'GET', headers: { ...API_HEADERS, authorization: `Bearer ${accessToken}` } }).catch(unreachable);
      const id = field(user.body, 'id');
      const login = field(user.body, 'login');
      if (user.status !== 200 || !id || !login) throw new ConnectFailure(`GitHub did not tell who the account is: HTTP ${user.status}, ${providerMessage(user.body)}`);
      return { accountId: id, username: login, tokens: null };
    },
  };
}

const unreachable = (error: unknown): never => {
  throw new ConnectFailure(error instanceof Error ? error.message : 'GitHub could not be reached');
};

/**
 * Repository access: PUT /repos/{owner}/{repo}/collaborators/{username} invites the account with the benefit's
 * permission (201 with the invitation, or 204 when it already collaborates); revoking cancels a pending invitation
 * and removes the collaborator.
 */
export function githubAccess(settings: GitHubBenefitSettings): AccessProvider {
  const headers = { ...API_HEADERS, authorization: `Bearer ${settings.token}` };
  const repo = (target: Record<string, unknown>) => `${settings.apiUrl}/repos/${segment(target.repository_owner)}/${segment(target.repository_name)}`;
  return {
    async grantAccess(target, account: ConnectedAccount) {
      if (!account.username) throw new GrantFailure('BenefitActionRequired', 'The connected GitHub account has no username: connect it again from the portal');
      const answer = await providerCall(SERVICE, `${repo(target)}/collaborators/${segment(account.username)}`, {
        method: 'PUT',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ permission: target.permission }),
      });
      if (answer.status === 201) return { invitation_id: field(answer.body, 'id') ?? null };
      if (answer.status === 204) return { invitation_id: null };
      throw refusal(SERVICE, `add ${account.username} to ${String(target.repository_owner)}/${String(target.repository_name)}`, answer);
    },
    async revokeAccess(target, granted) {
      const username = String(granted.granted_account_username ?? '');
      const accountId = String(granted.granted_account_id ?? '');
      // A pending invitation (the one this grant made, or any other to the same account) is withdrawn first.
      const invitations = await providerCall(SERVICE, `${repo(target)}/invitations?per_page=100`, { method: 'GET', headers });
      if (invitations.status !== 200 && invitations.status !== 404) throw refusal(SERVICE, 'list the repository’s invitations', invitations);
      const pending = Array.isArray(invitations.body) ? invitations.body : [];
      for (const invitation of pending) {
        const invitee = (invitation as { invitee?: unknown }).invitee;
        if (field(invitation, 'id') !== granted.invitation_id && field(invitee, 'id') !== accountId) continue;
        const removed = await providerCall(SERVICE, `${repo(target)}/invitations/${segment(field(invitation, 'id'))}`, { method: 'DELETE', headers });
        if (removed.status !== 204 && removed.status !== 404) throw refusal(SERVICE, 'cancel the invitation', removed);
      }
      if (!username) return;
      const removed = await providerCall(SERVICE, `${repo(target)}/collaborators/${segment(username)}`, { method: 'DELETE', headers });
      // 404: not (or no longer) a collaborator, which is what revoking wants.
      if (removed.status !== 204 && removed.status !== 404) throw refusal(SERVICE, `remove ${username} from the repository`, removed);
    },
  };
}
