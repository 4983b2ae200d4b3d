import { randomBytes } from 'node:crypto';
import { credential, startFakeServer, type FakeAnswer, type FakeRequest, type FakeServer } from './fake-server.js';

export interface FakeGitHubUser {
  id: number;
  login: string;
}

/**
 * A local stand-in for the GitHub endpoints Till uses, speaking their documented shapes: the OAuth web flow
 * (/login/oauth/authorize, /login/oauth/access_token), GET /user, and a repository's collaborators and invitations.
 * The user "signed in" on the fake consents at once. Stateful: a test asks who collaborates and who is invited.
 */
export interface FakeGitHub extends FakeServer {
  clientId: string;
  clientSecret: string;
  /** The token Till invites with (TILL_GITHUB_BENEFITS_TOKEN). */
  adminToken: string;
  /** The variables that point tilld at this fake. */
  env: Record<string, string>;
  /** The user who consents on the authorize page from now on. */
  signIn(user: FakeGitHubUser): void;
  addRepository(owner: string, name: string): void;
  collaborators(owner: string, name: string): Map<string, string>;
  invitations(owner: string, name: string): { id: number; login: string; permission: string }[];
  /** The invitee accepts: the invitation becomes a collaborator. */
  acceptInvitation(owner: string, name: string, login: string): void;
}

interface Repo {
  collaborators: Map<string, string>;
  invitations: { id: number; login: string; userId: number; permission: string }[];
}

const notFound: FakeAnswer = { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
const PERMISSIONS = new Set(['pull', 'triage', 'push', 'maintain', 'admin']);

export async function startFakeGitHub(): Promise<FakeGitHub> {
  const clientId = `Iv1.${randomBytes(8).toString('hex')}`;
  const clientSecret = randomBytes(20).toString('hex');
  const adminToken = `ghp_${randomBytes(18).toString('hex')}`;
  const users = new Map<number, FakeGitHubUser>();
  const codes = new Map<string, { user: FakeGitHubUser; redirectUri: string }>();
  const userTokens = new Map<string, FakeGitHubUser>();
  const repos = new Map<string, Repo>();
  let signedIn: FakeGitHubUser | undefined;
  let nextInvitation = 1000;

  const repoOf = (owner: string, name: string) => repos.get(`${owner}/${name}`.toLowerCase());
  const userByLogin = (login: string) => [...users.values()].find((user) => user.login.toLowerCase() === login.toLowerCase());
  const invitationWire = (owner: string, name: string, invitation: Repo['invitations'][number]) => ({
    id: invitation.id,
    node_id: `RI_${invitation.id}`,
    repository: { id: 1, name, full_name: `${owner}/${name}`, owner: { login: owner } },
    invitee: { login: invitation.login, id: invitation.userId, type: 'User' },
    inviter: { login: owner, id: 1, type: 'User' },
    permissions: invitation.permission === 'pull' ? 'read' : invitation.permission === 'push' ? 'write' : invitation.permission,
    created_at: new Date().toISOString(),
    expired: false,
    url: `https://api.github.com/user/repository_invitations/${invitation.id}`,
    html_url: `https://github.com/${owner}/${name}/invitations`,
  });

  function handle(request: FakeRequest): FakeAnswer {
    const { method, path } = request;
    if (method === 'GET' && path === '/login/oauth/authorize') {
      const redirectUri = request.query.get('redirect_uri') ?? '';
      if (request.query.get('client_id') !== clientId || !redirectUri) return { status: 404, body: 'Not Found' };
      if (!signedIn) return { status: 200, body: 'Sign in to GitHub', headers: { 'content-type': 'text/html' } };
      const code = randomBytes(10).toString('hex');
      codes.set(code, { user: signedIn, redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', request.query.get('state') ?? '');
      return { status: 302, headers: { location: back.toString() } };
    }
    if (method === 'POST' && path === '/login/oauth/access_token') {
      const form = (request.body ?? {}) as Record<string, string>;
      if (form.client_id !== clientId || form.client_secret !== clientSecret) return { status: 200, body: { error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' } };
      const grant = codes.get(form.code ?? '');
      codes.delete(form.code ?? '');
      if (!grant || (form.redirect_uri && form.redirect_uri !== grant.redirectUri)) {
        return { status: 200, body: { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' } };
      }
      const token = `gho_${randomBytes(18).toString('hex')}`;
      userTokens.set(token, grant.user);
      return { status: 200, body: { access_token: token, token_type: 'bearer', scope: '' } };
    }
    if (method === 'GET' && path === '/user') {
      const user = userTokens.get(credential(request, 'Bearer') ?? credential(request, 'token') ?? '');
      if (!user) return { status: 401, body: { message: 'Requires authentication' } };
      return { status: 200, body: { login: user.login, id: user.id, node_id: `U_${user.id}`, type: 'User', site_admin: false, name: null } };
    }
    const repoPath = path.match(/^\/repos\/([^/]+)\/([^/]+)\/(collaborators|invitations)(?:\/([^/]+))?$/);
    if (!repoPath) return notFound;
    if ((credential(request, 'Bearer') ?? credential(request, 'token')) !== adminToken) return { status: 401, body: { message: 'Bad credentials' } };
    const [, owner, name, kind, item] = repoPath.map((part) => (part === undefined ? part : decodeURIComponent(part))) as [string, string, string, string, string | undefined];
    const repo = repoOf(owner, name);
    if (!repo) return notFound;
    if (kind === 'collaborators' && item && method === 'PUT') {
      const permission = String((request.body as { permission?: unknown } | null)?.permission ?? 'push');
      if (!PERMISSIONS.has(permission)) return { status: 422, body: { message: 'Validation Failed', errors: [{ resource: 'Repository', field: 'permission', code: 'invalid' }] } };
      const user = userByLogin(item);
      if (!user) return notFound;
      if (repo.collaborators.has(user.login)) {
        repo.collaborators.set(user.login, permission);
        return { status: 204 };
      }
      let invitation = repo.invitations.find((pending) => pending.userId === user.id);
      if (invitation) invitation.permission = permission;
      else repo.invitations.push((invitation = { id: nextInvitation++, login: user.login, userId: user.id, permission }));
      return { status: 201, body: invitationWire(owner, name, invitation) };
    }
    if (kind === 'collaborators' && item && method === 'DELETE') {
      const user = userByLogin(item);
      if (user) repo.collaborators.delete(user.login);
      return { status: 204 };
    }
    if (kind === 'invitations' && !item && method === 'GET') return { status: 200, body: repo.invitations.map((invitation) => invitationWire(owner, name, invitation)) };
    if (kind === 'invitations' && item && method === 'DELETE') {
      const at = repo.invitations.findIndex((invitation) => String(invitation.id) === item);
      if (at === -1) return notFound;
      repo.invitations.splice(at, 1);
      return { status: 204 };
    }
    return notFound;
  }

  const server = await startFakeServer(handle);
  return {
    ...server,
    clientId,
    clientSecret,
    adminToken,
    env: {
      TILL_GITHUB_BENEFITS_CLIENT_ID: clientId,
      TILL_GITHUB_BENEFITS_CLIENT_SECRET: clientSecret,
      TILL_GITHUB_BENEFITS_TOKEN: adminToken,
      TILL_GITHUB_API_URL: server.url,
      TILL_GITHUB_OAUTH_URL: server.url,
    },
    signIn(user) {
      users.set(user.id, user);
      signedIn = user;
    },
    addRepository(owner, name) {
      repos.set(`${owner}/${name}`.toLowerCase(), { collaborators: new Map(), invitations: [] });
    },
    collaborators: (owner, name) => new Map(repoOf(owner, name)?.collaborators ?? []),
    invitations: (owner, name) => (repoOf(owner, name)?.invitations ?? []).map(({ id, login, permission }) => ({ id, login, permission })),
    acceptInvitation(owner, name, login) {
      const repo = repoOf(owner, name);
      const at = repo?.invitations.findIndex((invitation) => invitation.login === login) ?? -1;
      if (!repo || at === -1) throw new Error(`${login} has no invitation to ${owner}/${name}`);
      const [invitation] = repo.invitations.splice(at, 1);
      repo.collaborators.set(login, invitation!.permission);
    },
  };
}
