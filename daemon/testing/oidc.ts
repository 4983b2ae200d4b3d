import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID Connect provider (the `oidc-provider` package) on a loopback port, for sign-in tests:
 * discovery, authorization with PKCE, a login form of its own, token and userinfo endpoints, signed ID tokens.
 * Its accounts live in memory; faults can be switched on to see how tilld copes with a failing provider.
 */
export interface TestOidcAccount {
  /** What is typed in the provider's login form; also the account's subject (`sub`). */
  login: string;
  password: string;
  /** Left out: the provider knows no address for the account. */
  email?: string;
  emailVerified?: boolean;
  name?: string;
}

export interface TestOidcProvider {
  issuer: string;
  discoveryUrl: string;
  clientId: string;
  clientSecret: string;
  addAccount(account: TestOidcAccount): TestOidcAccount;
  /** Switches a failure on: the userinfo endpoint answers this status instead of the claims. */
  faults: { userinfoStatus?: number };
  /**
   * Per-test switches. `claimsInIdToken`: ID tokens carry the account's `email`, `email_verified` and `name`
   * (as Google's and many providers' do), which is what Better Auth's ID-token endpoints (`sign-in/social` and
   * `link-social` with `idToken`) read. Off (the default), an ID token holds only `sub` and the claims are
   * served at userinfo, which is what oidc-provider does by default (`conformIdTokenClaims`).
   */
  settings: { claimsInIdToken?: boolean };
  /**
   * An ID token for the account, got the way an app holding the client would get one: the authorization code
   * flow (PKCE, a nonce) run against the provider directly, the code taken off the redirect to `redirectUri`
   * (never followed, so tilld is not involved) and exchanged at the token endpoint.
   */
  issueIdToken(account: Pick<TestOidcAccount, 'login' | 'password'>, redirectUri?: string): Promise<string>;
  /** Requests the provider has received, as `METHOD path` (tests check what tilld asked for). */
  requests: string[];
  close(): Promise<void>;
}

export interface TestOidcOptions {
  /** Where the provider may send the browser back: tilld's `/api/auth/callback/<providerId>`. */
  redirectUris: string[];
  /** Address the provider is reached at; default 127.0.0.1. */
  host?: string;
  /** Port to listen on; default a free one. */
  port?: number;
  /** The client's secret; default a random one. */
  clientSecret?: string;
}

/** Starts a provider with one confidential client (client_secret_post, as Better Auth authenticates) and no accounts. */
export async function startTestOidcProvider(options: TestOidcOptions): Promise<TestOidcProvider> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer();
  await listen(server, options.port ?? 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  const issuer = `http://${host}:${port}`;
  const clientId = 'till-test-client';
  const clientSecret = options.clientSecret ?? randomBytes(24).toString('base64url');
  const accounts = new Map<string, TestOidcAccount>();
  const faults: TestOidcProvider['faults'] = {};
  const settings: TestOidcProvider['settings'] = {};
  const requests: string[] = [];

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [signingKey] },
    adapter: memoryAdapter(),
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // Scope claims may go in the ID token; whether they do is `settings.claimsInIdToken`, decided per token below.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims(use: string) {
          if (use === 'id_token' && !settings.claimsInIdToken) return { sub };
          return {
            sub,
            ...(account.email !== undefined ? { email: account.email, email_verified: account.emailVerified ?? true } : {}),
            ...(account.name !== undefined ? { name: account.name } : {}),
          };
        },
      };
    },
  });
  // Its own errors are answered as OAuth errors; they need not reach the test output.
  provider.on('server_error', () => {});
  const handle = provider.callback();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    requests.push(`${req.method} ${url.pathname}`);
    const interaction = url.pathname.match(/^\/interaction\/([^/]+)(\/login)?$/);
    if (interaction) {
      void handleInteraction(provider, accounts, req, res, interaction[2] === '/login').catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    if (url.pathname === '/me' && faults.userinfoStatus) {
      res.writeHead(faults.userinfoStatus, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'server_error' }));
      return;
    }
    handle(req, res);
  });

  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    clientId,
    clientSecret,
    addAccount(account) {
      accounts.set(account.login, account);
      return account;
    },
    faults,
    settings,
    issueIdToken: (account, redirectUri = options.redirectUris[0]!) => issueIdToken(issuer, clientId, clientSecret, redirectUri, account),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The provider's storage, in memory and its own (the package's built-in store warns on every start). */
function memoryAdapter() {
  const store = new Map<string, { payload: Record<string, unknown>; expiresAt?: number }>();
  return class MemoryAdapter {
    constructor(private readonly model: string) {}
    private key(id: string) {
      return `${this.model}:${id}`;
    }
    private live(key: string) {
      const entry = store.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt !== undefined && entry.expiresAt < Date.now()) {
        store.delete(key);
        return undefined;
      }
      return entry.payload;
    }
    async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
      store.set(this.key(id), { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : undefined });
    }
    async find(id: string) {
      return this.live(this.key(id));
    }
    async findByUid(uid: string) {
      for (const key of store.keys()) {
        if (key.startsWith(`${this.model}:`) && this.live(key)?.uid === uid) return this.live(key);
      }
      return undefined;
    }
    async findByUserCode(userCode: string) {
      for (const key of store.keys()) {
        if (key.startsWith(`${this.model}:`) && this.live(key)?.userCode === userCode) return this.live(key);
      }
      return undefined;
    }
    async consume(id: string) {
      const payload = this.live(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, entry] of store) if (entry.payload.grantId === grantId) store.delete(key);
    }
  };
}

/** The login form, and consent given at once (tilld is the provider's own first-party client). */
async function handleInteraction(provider: Provider, accounts: Map<string, TestOidcAccount>, req: IncomingMessage, res: ServerResponse, submitted: boolean) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'consent') {
    const grant = new provider.Grant({ accountId: details.session!.accountId!, clientId: details.params.client_id });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    return;
  }
  if (!submitted) return loginForm(res, details.uid);
  const form = new URLSearchParams(await readBody(req));
  const account = accounts.get(form.get('login') ?? '');
  if (!account || account.password !== form.get('password')) return loginForm(res, details.uid, 'Wrong login or password.');
  await provider.interactionFinished(req, res, { login: { accountId: account.login } }, { mergeWithLastSubmission: false });
}

function loginForm(res: ServerResponse, uid: string, error?: string) {
  res.writeHead(error ? 401 : 200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html lang="en"><head><title>Test identity provider</title></head><body>
<h1>Test identity provider</h1>${error ? `<p role="alert">${error}</p>` : ''}
<form method="post" action="/interaction/${encodeURIComponent(uid)}/login">
<label>Login <input name="login" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in at the provider</button>
</form></body></html>`);
}

async function issueIdToken(issuer: string, clientId: string, clientSecret: string, redirectUri: string, account: Pick<TestOidcAccount, 'login' | 'password'>): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL('/auth', issuer);
  authorize.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const browser = new HttpBrowser();
  const form = await browser.go(authorize.toString());
  const action = (await form.response.text()).match(/<form method="post" action="([^"]+)"/)?.[1];
  if (!action) throw new Error(`expected the provider's login form at ${form.url}`);
  let current = new URL(action, form.url).toString();
  let response = await browser.request(current, { form: { login: account.login, password: account.password } });
  // Login, consent, and back to the client with a code: every hop but the last stays at the provider.
  let code: string | null = null;
  for (let hops = 0; hops < 20 && code === null; hops++) {
    const location = response.headers.get('location');
    if (!location) throw new Error(`the provider stopped at ${current} with ${response.status}: ${(await response.text()).slice(0, 200)}`);
    await response.body?.cancel();
    const next = new URL(location, current);
    if (next.href.startsWith(redirectUri)) {
      code = next.searchParams.get('code');
      if (!code) throw new Error(`the provider answered without a code: ${next.href}`);
      break;
    }
    current = next.href;
    response = await browser.request(current);
  }
  if (code === null) throw new Error('the provider never sent the browser back');
  const token = await fetch(new URL('/token', issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, client_secret: clientSecret, code_verifier: verifier }),
  });
  const body = (await token.json()) as { id_token?: string };
  if (token.status !== 200 || !body.id_token) throw new Error(`token request failed (${token.status}): ${JSON.stringify(body)}`);
  return body.id_token;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** A free loopback port, for a daemon whose URL must be known before it starts (to register its callback). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await listen(server, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A browser over plain HTTP: a cookie jar per origin (name → value; expired cookies dropped) and redirects
 * followed by hand, so a test sees every hop between tilld and the provider.
 */
export class HttpBrowser {
  private readonly jars = new Map<string, Map<string, string>>();
  /** Every URL requested, in order. */
  readonly visited: string[] = [];

  cookie(url: string): string {
    return [...(this.jars.get(new URL(url).origin) ?? new Map<string, string>()).entries()].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  /** One request, no redirect followed; same-origin form posts carry an Origin as a browser's do. */
  async request(url: string, init: { method?: string; form?: Record<string, string>; json?: unknown } = {}): Promise<Response> {
    this.visited.push(url);
    const headers: Record<string, string> = {};
    const cookie = this.cookie(url);
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers.origin = new URL(url).origin;
      body = new URLSearchParams(init.form).toString();
    } else if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      headers.origin = new URL(url).origin;
      body = JSON.stringify(init.json);
    }
    const response = await fetch(url, { method: init.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    this.store(url, response);
    return response;
  }

  /** Requests `url` and follows redirects (as GETs) until a page answers; returns it and where it was. */
  async go(url: string, init: { method?: string; form?: Record<string, string>; json?: unknown } = {}): Promise<{ response: Response; url: string }> {
    let response = await this.request(url, init);
    let current = url;
    for (let hops = 0; response.status >= 300 && response.status < 400 && hops < 20; hops++) {
      const location = response.headers.get('location');
      if (!location) break;
      await response.body?.cancel();
      current = new URL(location, current).toString();
      response = await this.request(current);
    }
    return { response, url: current };
  }

  private store(url: string, response: Response) {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      const expired = attributes.some((attribute) => /^\s*max-age=(0|-\d+)\s*$/i.test(attribute)) || value === '';
      if (expired) jar.delete(name);
      else jar.set(name, value);
    }
  }
}

/**
 * From a page that sent the browser to the provider: fills the provider's login form, then follows the
 * redirects back (to tilld's callback and on). Returns where the browser ends up.
 */
export async function signInAtProvider(browser: HttpBrowser, providerPage: { response: Response; url: string }, account: Pick<TestOidcAccount, 'login' | 'password'>) {
  const { response, url } = providerPage;
  const html = await response.text();
  const action = html.match(/<form method="post" action="([^"]+)"/)?.[1];
  if (response.status !== 200 || !action) throw new Error(`expected the provider's login form at ${url}, got ${response.status}: ${html.slice(0, 200)}`);
  return browser.go(new URL(action, url).toString(), { form: { login: account.login, password: account.password } });
}
