import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { freePort, HttpBrowser, signInAtProvider, startTestOidcProvider, type TestOidcAccount, type TestOidcProvider } from '../testing/oidc.js';
import { newUser, type TestUser } from './testing.js';

/**
 * Sign-in and account linking through a real OpenID Connect provider (oidc-provider on a loopback port),
 * over HTTP with a cookie jar per site, following every redirect between tilld and the provider.
 */

let idp: TestOidcProvider;
let daemon: TestDaemon;

beforeAll(async () => {
  const port = await freePort();
  idp = await startTestOidcProvider({ redirectUris: [`http://127.0.0.1:${port}/api/auth/callback/oidc`] });
  daemon = await startTestDaemon({
    TILL_PORT: String(port),
    TILL_OIDC_DISCOVERY_URL: idp.discoveryUrl,
    TILL_OIDC_CLIENT_ID: idp.clientId,
    TILL_OIDC_CLIENT_SECRET: idp.clientSecret,
    TILL_OIDC_NAME: 'Test IdP',
    // Configured but never reached: only the redirect to them is checked.
    TILL_GITHUB_CLIENT_ID: 'github-client-id',
    TILL_GITHUB_CLIENT_SECRET: 'github-client-secret',
    TILL_GOOGLE_CLIENT_ID: 'google-client-id.apps.googleusercontent.com',
    TILL_GOOGLE_CLIENT_SECRET: 'google-client-secret',
  });
});
afterAll(async () => {
  await daemon?.close();
  await idp?.close();
});
afterEach(() => {
  idp.faults.userinfoStatus = undefined;
  idp.settings.claimsInIdToken = undefined;
});

const providerAccount = (label: string, extra: Partial<TestOidcAccount> = {}): TestOidcAccount =>
  idp.addAccount({ login: `${label}-${randomUUID().slice(0, 8)}`, password: 'provider password', email: `${label}-${randomUUID().slice(0, 8)}@idp.example`, name: `IdP ${label}`, ...extra });

/** From /sign-in, "Continue with Test IdP", then the provider's login form; returns where the browser lands. */
async function signInWithOidc(browser: HttpBrowser, account: Pick<TestOidcAccount, 'login' | 'password'>, next?: string) {
  const atProvider = await browser.go(`${daemon.url}/sign-in/social`, { form: { provider: 'oidc', ...(next ? { next } : {}) } });
  return signInAtProvider(browser, atProvider, account);
}

/** Signs in on the sign-in page with a password. */
async function signInWithPassword(browser: HttpBrowser, user: Pick<TestUser, 'email' | 'password'>) {
  const { response, url } = await browser.go(`${daemon.url}/sign-in`, { form: { email: user.email, password: user.password } });
  expect(new URL(url).pathname).toBe('/account');
  await response.body?.cancel();
}

async function signUp(browser: HttpBrowser, user: TestUser) {
  const response = await browser.request(`${daemon.url}/api/auth/sign-up/email`, { json: user });
  expect(response.status).toBe(200);
  return ((await response.json()) as { user: { id: string } }).user.id;
}

async function sessionUser(browser: HttpBrowser): Promise<{ id: string; email: string; name: string; emailVerified: boolean } | null> {
  const response = await browser.request(`${daemon.url}/api/auth/get-session`);
  const body = (await response.json()) as { user: { id: string; email: string; name: string; emailVerified: boolean } } | null;
  return body?.user ?? null;
}

const accountsOf = (userId: string) => daemon.db('account').where('userId', userId).orderBy('createdAt') as Promise<{ id: string; providerId: string; accountId: string; idToken: string | null }[]>;
const usersWithEmail = (email: string) => daemon.db('user').where('email', email.toLowerCase()) as Promise<{ id: string }[]>;

describe('the sign-in page with providers configured', () => {
  it('offers a "Continue with …" button per provider, each a plain form post', async () => {
    const response = await fetch(`${daemon.url}/sign-in?next=%2Fdevice`);
    // Browsers hold a form post's redirects to form-action: the providers' authorization origins are allowed, no more.
    expect(response.headers.get('content-security-policy')).toContain(`form-action 'self' https://github.com https://accounts.google.com ${idp.issuer};`);
    const html = await response.text();
    for (const name of ['GitHub', 'Google', 'Test IdP']) expect(html).toContain(`>Continue with ${name}</button>`);
    expect(html).toMatch(/<form [^>]*action="\/sign-in\/social" method="post"><input type="hidden" name="provider" value="oidc"\/><input type="hidden" name="next" value="\/device"\/>/);
  });

  it('sends the browser to GitHub and Google with the daemon\'s callback URL (the providers themselves are not contacted)', async () => {
    const browser = new HttpBrowser();
    const github = await browser.request(`${daemon.url}/sign-in/social`, { form: { provider: 'github' } });
    expect(github.status).toBe(303);
    const toGithub = new URL(github.headers.get('location')!);
    expect(toGithub.origin + toGithub.pathname).toBe('https://github.com/login/oauth/authorize');
    expect(toGithub.searchParams.get('client_id')).toBe('github-client-id');
    expect(toGithub.searchParams.get('redirect_uri')).toBe(`${daemon.url}/api/auth/callback/github`);
    expect(github.headers.getSetCookie().join(';')).toContain('better-auth.state=');

    const google = await browser.request(`${daemon.url}/sign-in/social`, { form: { provider: 'google' } });
    const toGoogle = new URL(google.headers.get('location')!);
    expect(toGoogle.hostname).toBe('accounts.google.com');
    expect(toGoogle.searchParams.get('redirect_uri')).toBe(`${daemon.url}/api/auth/callback/google`);
    expect(toGoogle.searchParams.get('scope')).toContain('email');
  });
});

describe('the sign-up page with providers configured', () => {
  it('offers the sign-in page\'s "Continue with …" buttons, posting to /sign-in/social with next, under the same form-action policy', async () => {
    const response = await fetch(`${daemon.url}/sign-up?next=%2Fdevice`);
    expect(response.headers.get('content-security-policy')).toContain(`form-action 'self' https://github.com https://accounts.google.com ${idp.issuer};`);
    const html = await response.text();
    expect(html).toContain('>Or sign up with</h2>');
    for (const name of ['GitHub', 'Google', 'Test IdP']) expect(html).toContain(`>Continue with ${name}</button>`);
    expect(html).toMatch(/<form [^>]*action="\/sign-in\/social" method="post"><input type="hidden" name="provider" value="oidc"\/><input type="hidden" name="next" value="\/device"\/>/);
  });

  it('shows no provider section without providers', async () => {
    const plain = await startTestDaemon();
    try {
      const html = await (await fetch(`${plain.url}/sign-up`)).text();
      expect(html).toContain('Create account');
      expect(html).not.toContain('Continue with');
      expect(html).not.toContain('Or sign up with');
    } finally {
      await plain.close();
    }
  });
});

describe('signing in through an OpenID Connect provider', () => {
  it('creates the user and its linked account on first sign-in, lands on /account, and reuses both next time', async () => {
    const account = providerAccount('first');
    const browser = new HttpBrowser();
    const { response, url } = await signInWithOidc(browser, account);
    expect(url).toBe(`${daemon.url}/account`);
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(html).toContain(account.email);
    expect(html).toContain('Sign-in methods');
    expect(html).toContain('>Test IdP</td>');

    // The authorization request used PKCE and a nonce, and the provider's userinfo endpoint was asked.
    const authorize = new URL(browser.visited.find((visited) => visited.startsWith(`${idp.issuer}/auth?`))!);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('scope')).toBe('openid email profile');
    expect(idp.requests).toContain('GET /me');

    const user = (await sessionUser(browser))!;
    expect(user).toMatchObject({ email: account.email, name: account.name, emailVerified: true });
    expect((await accountsOf(user.id)).map((row) => [row.providerId, row.accountId])).toEqual([['oidc', account.login]]);

    // Again, in another browser, straight to the page named by `next`: same user, no second account.
    const again = new HttpBrowser();
    const second = await signInWithOidc(again, account, '/device');
    expect(second.url).toBe(`${daemon.url}/device`);
    expect((await sessionUser(again))!.id).toBe(user.id);
    expect(await usersWithEmail(account.email!)).toHaveLength(1);
    expect(await accountsOf(user.id)).toHaveLength(1);
  });

  it('shows "Failed to get user info" when the provider\'s userinfo endpoint fails, and makes no user', async () => {
    const account = providerAccount('userinfo');
    idp.faults.userinfoStatus = 500;
    const browser = new HttpBrowser();
    const { response, url } = await signInWithOidc(browser, account);
    expect(new URL(url).pathname).toBe('/sign-in');
    expect(new URL(url).searchParams.get('error')).toBe('unable_to_get_user_info');
    expect(await response.text()).toContain('Failed to get user info');
    expect(await sessionUser(browser)).toBeNull();
    expect(await usersWithEmail(account.email!)).toHaveLength(0);
  });

  it('shows "User email not found" when the provider shares no email address', async () => {
    const account = providerAccount('noemail', { email: undefined });
    const browser = new HttpBrowser();
    const { response, url } = await signInWithOidc(browser, account, '/device');
    expect(new URL(url).pathname).toBe('/sign-in');
    expect(new URL(url).searchParams.get('error')).toBe('email_not_found');
    // The way back keeps `next`, so a second try still ends where it should.
    expect(new URL(url).searchParams.get('next')).toBe('/device');
    expect(await response.text()).toContain('User email not found');
    expect(await sessionUser(browser)).toBeNull();
  });

  it('answers "Provider not found" for a provider that is not configured: on the page, the API and the callback', async () => {
    const browser = new HttpBrowser();
    const page = await browser.request(`${daemon.url}/sign-in/social`, { form: { provider: 'myspace' } });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('Provider not found');

    const api = await browser.request(`${daemon.url}/api/auth/sign-in/social`, { json: { provider: 'myspace', callbackURL: '/account' } });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: 'PROVIDER_NOT_FOUND', message: 'Provider not found' });

    // A callback addressed to an unknown provider, with a genuine state from a sign-in this browser started.
    const started = await browser.request(`${daemon.url}/sign-in/social`, { form: { provider: 'oidc' } });
    const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
    const { response, url } = await browser.go(`${daemon.url}/api/auth/callback/myspace?code=abc&state=${state}`);
    expect(new URL(url).searchParams.get('error')).toBe('oauth_provider_not_found');
    expect(await response.text()).toContain('Provider not found');
  });

  it('shows why when the provider refuses, or when the way back is stale or forged', async () => {
    const browser = new HttpBrowser();
    const started = await browser.request(`${daemon.url}/sign-in/social`, { form: { provider: 'oidc', next: '/device' } });
    const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
    // The user says no at the provider (RFC 6749 §4.1.2.1).
    const refused = await browser.go(`${daemon.url}/api/auth/callback/oidc?error=access_denied&state=${state}&iss=${encodeURIComponent(idp.issuer)}`);
    expect(new URL(refused.url).pathname).toBe('/sign-in');
    expect(new URL(refused.url).searchParams.get('next')).toBe('/device');
    expect(await refused.response.text()).toContain('Sign-in was cancelled at the provider.');
    // A state tilld never issued.
    const forged = await browser.go(`${daemon.url}/api/auth/callback/oidc?code=abc&state=not-a-state`);
    expect(new URL(forged.url).pathname).toBe('/sign-in');
    expect(new URL(forged.url).searchParams.get('error')).toBe('state_mismatch');
    expect(await forged.response.text()).toContain('The sign-in took too long, or was started in another browser.');
    // An error code nobody planned for is not repeated back.
    const odd = await browser.go(`${daemon.url}/sign-in?error=%3Cscript%3Ealert(1)%3C%2Fscript%3E`);
    const html = await odd.response.text();
    expect(html).toContain('Signing in with the provider did not work.');
    expect(html).not.toContain('alert(1)');
  });

  it('does not sign in to an existing account with the same address until that address is verified, and then only if the provider verified it too', async () => {
    const user = newUser('existing');
    const browser = new HttpBrowser();
    const userId = await signUp(browser, user);
    const account = providerAccount('existing', { email: user.email });

    // The local address is not verified: anyone could have typed it at sign-up.
    const refused = await signInWithOidc(new HttpBrowser(), account);
    expect(new URL(refused.url).searchParams.get('error')).toBe('account_not_linked');
    expect(await refused.response.text()).toContain('An account with this email address already exists');
    expect(await accountsOf(userId)).toHaveLength(1);

    await daemon.db('user').where('id', userId).update({ emailVerified: true });
    // The provider does not vouch for the address: still refused.
    const unverified = providerAccount('unverified', { email: user.email, emailVerified: false });
    const stillRefused = await signInWithOidc(new HttpBrowser(), unverified);
    expect(new URL(stillRefused.url).searchParams.get('error')).toBe('account_not_linked');

    // Both sides verified: the identity joins the existing account.
    const joined = new HttpBrowser();
    const { url } = await signInWithOidc(joined, account);
    expect(url).toBe(`${daemon.url}/account`);
    expect((await sessionUser(joined))!.id).toBe(userId);
    expect((await accountsOf(userId)).map((row) => row.providerId)).toEqual(['credential', 'oidc']);
  });
});

describe('linking and unlinking from /account', () => {
  it('links the provider to a password account, which can then sign in with it, and unlinks it again', async () => {
    const user = newUser('linker');
    const browser = new HttpBrowser();
    const userId = await signUp(browser, user);
    const account = providerAccount('linker', { email: user.email });

    const before = await (await browser.request(`${daemon.url}/account`)).text();
    expect(before).toContain('>Password</td>');
    expect(before).toContain('>Link Test IdP</button>');

    const atProvider = await browser.go(`${daemon.url}/account/accounts/link`, { form: { provider: 'oidc' } });
    const { response, url } = await signInAtProvider(browser, atProvider, account);
    expect(url).toBe(`${daemon.url}/account?notice=account-linked`);
    const html = await response.text();
    expect(html).toContain('The account was linked');
    expect(html).toContain('>Test IdP</td>');
    expect(html).not.toContain('>Link Test IdP</button>');
    const rows = await accountsOf(userId);
    expect(rows.map((row) => [row.providerId, row.accountId])).toEqual([
      ['credential', userId],
      ['oidc', account.login],
    ]);

    // The provider now signs in to the same user.
    const elsewhere = new HttpBrowser();
    await signInWithOidc(elsewhere, account);
    expect((await sessionUser(elsewhere))!.id).toBe(userId);

    // An id that is not one of the user's accounts.
    const unknown = await browser.request(`${daemon.url}/account/accounts/unlink`, { form: { account_id: 'not-an-account' } });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('Account not found');
    const unknownApi = await browser.request(`${daemon.url}/api/auth/unlink-account`, { json: { accountId: 'not-an-account' } });
    expect(unknownApi.status).toBe(400);
    expect(await unknownApi.json()).toMatchObject({ code: 'ACCOUNT_NOT_FOUND', message: 'Account not found' });

    const unlinked = await browser.go(`${daemon.url}/account/accounts/unlink`, { form: { account_id: rows[1]!.id } });
    expect(unlinked.url).toBe(`${daemon.url}/account?notice=account-unlinked`);
    expect(await unlinked.response.text()).toContain('>Link Test IdP</button>');
    expect((await accountsOf(userId)).map((row) => row.providerId)).toEqual(['credential']);
  });

  it('refuses to unlink the last way to sign in: "You can\'t unlink your last account"', async () => {
    const user = newUser('last');
    const browser = new HttpBrowser();
    const userId = await signUp(browser, user);
    const [only] = await accountsOf(userId);
    const page = await browser.request(`${daemon.url}/account/accounts/unlink`, { form: { account_id: only!.id } });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('You can&#x27;t unlink your last account');
    const api = await browser.request(`${daemon.url}/api/auth/unlink-account`, { json: { accountId: only!.id } });
    expect(api.status).toBe(400);
    expect(await api.json()).toMatchObject({ code: 'FAILED_TO_UNLINK_LAST_ACCOUNT', message: "You can't unlink your last account" });
    expect(await accountsOf(userId)).toHaveLength(1);

    // The same for an account made by the provider, whose only sign-in is the provider.
    const providerOnly = new HttpBrowser();
    await signInWithOidc(providerOnly, providerAccount('lastoidc'));
    const { id } = (await sessionUser(providerOnly))!;
    const [oidcRow] = await accountsOf(id);
    const refused = await providerOnly.request(`${daemon.url}/account/accounts/unlink`, { form: { account_id: oidcRow!.id } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('You can&#x27;t unlink your last account');
  });

  it('refuses to link a provider account whose address is not the user\'s', async () => {
    const user = newUser('mismatch');
    const browser = new HttpBrowser();
    const userId = await signUp(browser, user);
    const account = providerAccount('mismatch');
    const atProvider = await browser.go(`${daemon.url}/account/accounts/link`, { form: { provider: 'oidc' } });
    const { response, url } = await signInAtProvider(browser, atProvider, account);
    expect(new URL(url).pathname).toBe('/account');
    expect(new URL(url).searchParams.get('error')).toBe('email_does_not_match');
    expect(await response.text()).toContain('only an account with the same address can be linked');
    expect(await accountsOf(userId)).toHaveLength(1);
  });

  it('refuses to link a provider account that already signs in to another user: "Social account already linked"', async () => {
    // Someone signs up through the provider; later the provider account's address changes to another
    // person's, who has a Till account of their own and tries to link it.
    const account = providerAccount('taken');
    const first = new HttpBrowser();
    await signInWithOidc(first, account);
    const owner = (await sessionUser(first))!;

    const other = newUser('taker');
    const browser = new HttpBrowser();
    const otherId = await signUp(browser, other);
    idp.addAccount({ ...account, email: other.email });

    const atProvider = await browser.go(`${daemon.url}/account/accounts/link`, { form: { provider: 'oidc' } });
    const { response, url } = await signInAtProvider(browser, atProvider, account);
    expect(new URL(url).searchParams.get('error')).toBe('account_already_linked_to_different_user');
    expect(await response.text()).toContain('Social account already linked');
    expect(await accountsOf(otherId)).toHaveLength(1);
    expect((await accountsOf(owner.id)).map((row) => row.providerId)).toEqual(['oidc']);
  });

  it('answers "Provider not found" when linking a provider that is not configured', async () => {
    const browser = new HttpBrowser();
    await signUp(browser, newUser('nolink'));
    const page = await browser.request(`${daemon.url}/account/accounts/link`, { form: { provider: 'myspace' } });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('Provider not found');
    const api = await browser.request(`${daemon.url}/api/auth/link-social`, { json: { provider: 'myspace', callbackURL: '/account' } });
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ code: 'PROVIDER_NOT_FOUND' });
  });
});

describe('signing in with an ID token over the API (POST /api/auth/sign-in/social with idToken)', () => {
  it('refuses a token that is not the provider\'s: "Invalid token"', async () => {
    const browser = new HttpBrowser();
    const response = await browser.request(`${daemon.url}/api/auth/sign-in/social`, { json: { provider: 'oidc', idToken: { token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' } } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'INVALID_TOKEN', message: 'Invalid token' });
  });

  it('answers "id_token not supported" for a provider that cannot verify one (GitHub)', async () => {
    const browser = new HttpBrowser();
    const response = await browser.request(`${daemon.url}/api/auth/sign-in/social`, { json: { provider: 'github', idToken: { token: 'whatever' } } });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 'ID_TOKEN_NOT_SUPPORTED', message: 'id_token not supported' });
  });

  it('answers "Failed to get user info" for a genuine token that carries no address (the provider keeps it for userinfo)', async () => {
    const account = providerAccount('idtoken');
    const browser = new HttpBrowser();
    await signInWithOidc(browser, account);
    const { id } = (await sessionUser(browser))!;
    const [row] = await accountsOf(id);
    expect(row!.idToken).toMatch(/^ey/);
    const response = await new HttpBrowser().request(`${daemon.url}/api/auth/sign-in/social`, { json: { provider: 'oidc', idToken: { token: row!.idToken } } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'FAILED_TO_GET_USER_INFO', message: 'Failed to get user info' });
  });
});

describe('ID tokens that carry the user\'s claims (POST /api/auth/link-social and sign-in/social with idToken)', () => {
  const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  const linkWithIdToken = (browser: HttpBrowser, token: string) =>
    browser.request(`${daemon.url}/api/auth/link-social`, { json: { provider: 'oidc', callbackURL: '/account', idToken: { token } } });

  it('refuses to link an identity that already signs in to another user: 409 SOCIAL_ACCOUNT_ALREADY_LINKED "Social account already linked"', async () => {
    idp.settings.claimsInIdToken = true;
    // The identity's owner signed up through the provider.
    const account = providerAccount('owned');
    const ownerBrowser = new HttpBrowser();
    await signInWithOidc(ownerBrowser, account);
    const owner = (await sessionUser(ownerBrowser))!;

    // Someone else, signed in with a password, holds an ID token for that identity (the token is genuine:
    // the provider issued it to the client) and asks to link it to their own account.
    const token = await idp.issueIdToken(account);
    expect(claimsOf(token)).toMatchObject({ sub: account.login, email: account.email, email_verified: true });
    const other = newUser('claimer');
    const browser = new HttpBrowser();
    const otherId = await signUp(browser, other);
    const refused = await linkWithIdToken(browser, token);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: 'SOCIAL_ACCOUNT_ALREADY_LINKED', message: 'Social account already linked' });
    expect((await accountsOf(otherId)).map((row) => row.providerId)).toEqual(['credential']);
    expect((await accountsOf(owner.id)).map((row) => [row.providerId, row.accountId])).toEqual([['oidc', account.login]]);

    // The owner presenting the same token is not refused: it is their own identity.
    const own = await linkWithIdToken(ownerBrowser, token);
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ status: true });
    expect(await accountsOf(owner.id)).toHaveLength(1);
  });

  it('links an identity with the same verified address, which then signs in with an ID token of its own', async () => {
    idp.settings.claimsInIdToken = true;
    const user = newUser('idlink');
    const browser = new HttpBrowser();
    const userId = await signUp(browser, user);
    const account = providerAccount('idlink', { email: user.email });

    const linked = await linkWithIdToken(browser, await idp.issueIdToken(account));
    expect(linked.status).toBe(200);
    expect(await linked.json()).toMatchObject({ status: true });
    expect((await accountsOf(userId)).map((row) => [row.providerId, row.accountId])).toEqual([
      ['credential', userId],
      ['oidc', account.login],
    ]);

    const elsewhere = new HttpBrowser();
    const signedIn = await elsewhere.request(`${daemon.url}/api/auth/sign-in/social`, { json: { provider: 'oidc', idToken: { token: await idp.issueIdToken(account) } } });
    expect(signedIn.status).toBe(200);
    expect(await signedIn.json()).toMatchObject({ redirect: false, user: { id: userId } });
    expect((await sessionUser(elsewhere))!.id).toBe(userId);
  });
});

describe('deleting an account that has no password', () => {
  it('answers 400 CREDENTIAL_ACCOUNT_NOT_FOUND "Credential account not found" to a password it does not have: changing it, or deleting with it', async () => {
    const account = providerAccount('nopassword');
    const browser = new HttpBrowser();
    await signInWithOidc(browser, account);
    const { id } = (await sessionUser(browser))!;
    const change = await browser.request(`${daemon.url}/api/auth/change-password`, { json: { currentPassword: 'a guessed password', newPassword: 'a brand new passphrase' } });
    expect(change.status).toBe(400);
    expect(await change.json()).toEqual({ code: 'CREDENTIAL_ACCOUNT_NOT_FOUND', message: 'Credential account not found' });
    const remove = await browser.request(`${daemon.url}/api/auth/delete-user`, { json: { password: 'a guessed password' } });
    expect(remove.status).toBe(400);
    expect(await remove.json()).toEqual({ code: 'CREDENTIAL_ACCOUNT_NOT_FOUND', message: 'Credential account not found' });
    expect(await daemon.db('user').where('id', id)).toHaveLength(1);
    expect((await accountsOf(id)).map((row) => row.providerId)).toEqual(['oidc']);
  });

  it('mails a link from the account page, and following it deletes the account', async () => {
    const account = providerAccount('deleter');
    const browser = new HttpBrowser();
    await signInWithOidc(browser, account);
    const { id } = (await sessionUser(browser))!;
    const page = await (await browser.request(`${daemon.url}/account`)).text();
    expect(page).toContain('>Email me a link to delete my account</button>');
    expect(page).not.toContain('name="password"');

    const asked = await browser.go(`${daemon.url}/account/delete`, { form: {} });
    expect(asked.url).toBe(`${daemon.url}/account?notice=delete-link-sent`);
    expect(await asked.response.text()).toContain('your account is deleted when you follow the link');
    const [mail] = (await daemon.db('mail_outbox').where('to_address', account.email).orderBy('created_at', 'desc')) as { body: string }[];
    const link = mail!.body.match(/http\S+\/api\/auth\/delete-user\/callback\?token=\S+/)![0];
    const followed = await browser.go(link);
    expect(followed.url).toBe(`${daemon.url}/sign-in?notice=account-deleted`);
    expect(await followed.response.text()).toContain('Your account was deleted.');
    expect(await daemon.db('user').where('id', id)).toHaveLength(0);
    expect(await daemon.db('account').where('userId', id)).toHaveLength(0);
  });
});

describe('a provider that cannot be reached when tilld starts', () => {
  it('keeps its button, says it cannot be reached, and works once the provider is up', async () => {
    const [port, idpPort] = [await freePort(), await freePort()];
    const redirectUris = [`http://127.0.0.1:${port}/api/auth/callback/oidc`];
    // A provider up once, so its client id and secret are known, then down while tilld starts.
    const first = await startTestOidcProvider({ redirectUris, port: idpPort });
    await first.close();
    const late = await startTestDaemon({
      TILL_PORT: String(port),
      TILL_OIDC_DISCOVERY_URL: first.discoveryUrl,
      TILL_OIDC_CLIENT_ID: first.clientId,
      TILL_OIDC_CLIENT_SECRET: first.clientSecret,
      TILL_OIDC_NAME: 'Late IdP',
    });
    let provider: TestOidcProvider | undefined;
    try {
      const browser = new HttpBrowser();
      const page = await browser.request(`${late.url}/sign-in`);
      expect(page.headers.get('content-security-policy')).toContain(`form-action 'self' ${first.issuer};`);
      expect(await page.text()).toContain('>Continue with Late IdP</button>');
      const down = await browser.request(`${late.url}/sign-in/social`, { form: { provider: 'oidc' } });
      expect(down.status).toBe(503);
      expect(await down.text()).toContain('Late IdP cannot be reached right now');
      expect(JSON.stringify(late.logs)).toContain('Discovery fetch failed for \\"oidc\\"');

      // The provider comes up: the next sign-in finds it and goes through.
      provider = await startTestOidcProvider({ redirectUris, port: idpPort, clientSecret: first.clientSecret });
      const account = provider.addAccount({ login: 'late', password: 'late password', email: 'late@idp.example' });
      const up = await browser.request(`${late.url}/sign-in/social`, { form: { provider: 'oidc' } });
      expect(up.status).toBe(303);
      expect(up.headers.get('location')).toMatch(new RegExp(`^${provider.issuer}/auth\\?`));
      const { url } = await signInAtProvider(browser, await browser.go(up.headers.get('location')!), account);
      expect(url).toBe(`${late.url}/account`);
    } finally {
      await late.close();
      await provider?.close();
    }
  });
});

describe('with TILL_REQUIRE_EMAIL_VERIFICATION=1', () => {
  it('signs in at once when the provider verified the address, and otherwise says "Email not verified" and mails a link', async () => {
    const port = await freePort();
    const strictIdp = await startTestOidcProvider({ redirectUris: [`http://127.0.0.1:${port}/api/auth/callback/oidc`] });
    const strict = await startTestDaemon({
      TILL_PORT: String(port),
      TILL_REQUIRE_EMAIL_VERIFICATION: '1',
      TILL_OIDC_DISCOVERY_URL: strictIdp.discoveryUrl,
      TILL_OIDC_CLIENT_ID: strictIdp.clientId,
      TILL_OIDC_CLIENT_SECRET: strictIdp.clientSecret,
    });
    try {
      const start = (browser: HttpBrowser) => browser.go(`${strict.url}/sign-in/social`, { form: { provider: 'oidc' } });
      const verified = strictIdp.addAccount({ login: 'verified', password: 'pw', email: 'verified@idp.example', emailVerified: true });
      const ok = new HttpBrowser();
      expect((await signInAtProvider(ok, await start(ok), verified)).url).toBe(`${strict.url}/account`);

      const unverified = strictIdp.addAccount({ login: 'unverified', password: 'pw', email: 'unverified@idp.example', emailVerified: false });
      const browser = new HttpBrowser();
      const refused = await signInAtProvider(browser, await start(browser), unverified);
      expect(new URL(refused.url).searchParams.get('error')).toBe('email_not_verified');
      expect(await refused.response.text()).toContain('Email not verified.');
      expect((await (await browser.request(`${strict.url}/api/auth/get-session`)).json())).toBeNull();
      // The same over the API, with an ID token the provider issued: 403 EMAIL_NOT_VERIFIED, no session.
      strictIdp.settings.claimsInIdToken = true;
      const byToken = await new HttpBrowser().request(`${strict.url}/api/auth/sign-in/social`, {
        json: { provider: 'oidc', idToken: { token: await strictIdp.issueIdToken(unverified) } },
      });
      expect(byToken.status).toBe(403);
      expect(await byToken.json()).toMatchObject({ code: 'EMAIL_NOT_VERIFIED', message: 'Email not verified' });
      expect(byToken.headers.getSetCookie().join(';')).not.toContain('better-auth.session_token=');

      // The account exists; the mailed link verifies it, and the provider then signs in.
      const [mail] = (await strict.db('mail_outbox').where('to_address', 'unverified@idp.example')) as { body: string }[];
      const link = mail!.body.match(/http\S+\/api\/auth\/verify-email\?token=\S+/)![0];
      await browser.go(link);
      const again = new HttpBrowser();
      expect((await signInAtProvider(again, await start(again), unverified)).url).toBe(`${strict.url}/account`);
    } finally {
      await strict.close();
      await strictIdp.close();
    }
  });
});
