import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'till-config-'));

describe('loadConfig', () => {
  it('serves 127.0.0.1:4010 on SQLite in the data directory when nothing is set', () => {
    const dataDir = tempDir();
    const config = loadConfig({ TILL_DATA_DIR: dataDir });
    expect(config).toMatchObject({ host: '127.0.0.1', port: 4010, baseUrl: 'http://127.0.0.1:4010', rateLimit: true });
    expect(config.database).toEqual({ client: 'sqlite', filename: join(dataDir, 'till.sqlite') });
  });

  it('puts the data directory under XDG_DATA_HOME, else ~/.local/share', () => {
    const xdg = tempDir();
    expect(loadConfig({ XDG_DATA_HOME: xdg }).dataDir).toBe(join(xdg, 'till'));
    const home = tempDir();
    expect(loadConfig({ HOME: home }).dataDir).toBe(join(home, '.local', 'share', 'till'));
  });

  it('generates a secret once, keeps it with mode 0600, and reuses it', () => {
    const dataDir = tempDir();
    const first = loadConfig({ TILL_DATA_DIR: dataDir }).secret;
    expect(first.length).toBeGreaterThanOrEqual(32);
    const file = join(dataDir, 'secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first);
    expect(loadConfig({ TILL_DATA_DIR: dataDir }).secret).toBe(first);
  });

  it('prefers TILL_SECRET and refuses a short one', () => {
    const dataDir = tempDir();
    expect(loadConfig({ TILL_DATA_DIR: dataDir, TILL_SECRET: 's'.repeat(40) }).secret).toBe('s'.repeat(40));
    expect(() => loadConfig({ TILL_DATA_DIR: dataDir, TILL_SECRET: 'short' })).toThrow(ConfigError);
  });

  it('switches to PostgreSQL with a postgres:// TILL_DATABASE_URL', () => {
    const config = loadConfig({ TILL_DATA_DIR: tempDir(), TILL_DATABASE_URL: 'postgres://till@db.internal:5432/till' });
    expect(config.database).toEqual({ client: 'postgres', connectionString: 'postgres://till@db.internal:5432/till' });
  });

  it('takes host, port and the public base URL from the environment', () => {
    const config = loadConfig({ TILL_DATA_DIR: tempDir(), TILL_HOST: '0.0.0.0', TILL_PORT: '8080', TILL_BASE_URL: 'https://till.example.com/' });
    expect(config).toMatchObject({ host: '0.0.0.0', port: 8080, baseUrl: 'https://till.example.com' });
  });

  it('refuses a port that is not a number with a message naming the variable', () => {
    expect(() => loadConfig({ TILL_DATA_DIR: tempDir(), TILL_PORT: 'eighty' })).toThrow(/TILL_PORT must be a whole number/);
    expect(() => loadConfig({ TILL_DATA_DIR: tempDir(), TILL_PORT: '70000' })).toThrow(/TILL_PORT/);
  });

  it('turns captcha on only when both the provider and the secret key are set, and checks the provider', () => {
    const dataDir = tempDir();
    expect(loadConfig({ TILL_DATA_DIR: dataDir, TILL_CAPTCHA_PROVIDER: 'hcaptcha' }).captcha).toBeUndefined();
    expect(loadConfig({ TILL_DATA_DIR: dataDir, TILL_CAPTCHA_PROVIDER: 'hcaptcha', TILL_CAPTCHA_SECRET_KEY: 'k' }).captcha).toEqual({
      provider: 'hcaptcha',
      secretKey: 'k',
      siteVerifyUrl: undefined,
    });
    expect(() => loadConfig({ TILL_DATA_DIR: dataDir, TILL_CAPTCHA_PROVIDER: 'recaptcha-v9', TILL_CAPTCHA_SECRET_KEY: 'k' })).toThrow(
      /TILL_CAPTCHA_PROVIDER must be one of cloudflare-turnstile, google-recaptcha, hcaptcha, captchafox/,
    );
  });

  it('reads the session settings in seconds, defaulting to 7 days, 1 day, 1 day and 5 minutes', () => {
    expect(loadConfig({ TILL_DATA_DIR: tempDir() }).session).toEqual({ expiresIn: 604800, updateAge: 86400, freshAge: 86400, cookieCacheMaxAge: 300 });
    expect(loadConfig({ TILL_DATA_DIR: tempDir(), TILL_SESSION_FRESH_AGE: '0' }).session.freshAge).toBe(0);
  });

  it('refuses a session expiry above 400 days, the longest a browser keeps a cookie (SPEC §9)', () => {
    expect(loadConfig({ TILL_DATA_DIR: tempDir(), TILL_SESSION_EXPIRES_IN: '34560000' }).session.expiresIn).toBe(34560000);
    const load = () => loadConfig({ TILL_DATA_DIR: tempDir(), TILL_SESSION_EXPIRES_IN: '34560001' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow('TILL_SESSION_EXPIRES_IN must be at most 34560000 seconds (400 days): a browser keeps a cookie no longer than that (SPEC §9); got "34560001"');
  });
});

describe('TILL_TRUST_PROXY', () => {
  it('is off by default and never trusts every X-Forwarded-For entry', () => {
    const dataDir = tempDir();
    expect(loadConfig({ TILL_DATA_DIR: dataDir }).trustProxy).toBe(false);
    expect(loadConfig({ TILL_DATA_DIR: dataDir, TILL_TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TILL_DATA_DIR: dataDir, TILL_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TILL_DATA_DIR: dataDir, TILL_TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8']);
  });
});

describe('TILL_LOG_LEVEL', () => {
  it('takes pino levels and refuses anything else with a message naming the variable', () => {
    expect(loadConfig({ TILL_DATA_DIR: tempDir(), TILL_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(() => loadConfig({ TILL_DATA_DIR: tempDir(), TILL_LOG_LEVEL: 'loud' })).toThrow(/TILL_LOG_LEVEL must be one of trace, debug/);
  });
  it('turns GitHub and Google sign-in on only with both the client id and the secret, and refuses one without the other', () => {
    const dataDir = tempDir();
    expect(loadConfig({ TILL_DATA_DIR: dataDir }).social).toEqual({});
    const config = loadConfig({
      TILL_DATA_DIR: dataDir,
      TILL_GITHUB_CLIENT_ID: 'gh-id',
      TILL_GITHUB_CLIENT_SECRET: 'gh-secret',
      TILL_GOOGLE_CLIENT_ID: 'g-id',
      TILL_GOOGLE_CLIENT_SECRET: 'g-secret',
    });
    expect(config.social).toEqual({ github: { clientId: 'gh-id', clientSecret: 'gh-secret' }, google: { clientId: 'g-id', clientSecret: 'g-secret' } });
    expect(() => loadConfig({ TILL_DATA_DIR: dataDir, TILL_GITHUB_CLIENT_ID: 'gh-id' })).toThrow(
      'TILL_GITHUB_CLIENT_ID is set but TILL_GITHUB_CLIENT_SECRET is not: set both to turn this sign-in on, or neither',
    );
    expect(() => loadConfig({ TILL_DATA_DIR: dataDir, TILL_GOOGLE_CLIENT_SECRET: 'g-secret' })).toThrow(
      'TILL_GOOGLE_CLIENT_SECRET is set but TILL_GOOGLE_CLIENT_ID is not',
    );
  });

  it('configures an OpenID Connect provider from its discovery URL, with defaults for its id, name and scopes', () => {
    const dataDir = tempDir();
    const oidc = { TILL_DATA_DIR: dataDir, TILL_OIDC_DISCOVERY_URL: 'https://id.example.com/.well-known/openid-configuration', TILL_OIDC_CLIENT_ID: 'till', TILL_OIDC_CLIENT_SECRET: 's3cret' };
    expect(loadConfig(oidc).social.oidc).toEqual({
      providerId: 'oidc',
      name: 'SSO',
      discoveryUrl: 'https://id.example.com/.well-known/openid-configuration',
      clientId: 'till',
      clientSecret: 's3cret',
      scopes: ['openid', 'email', 'profile'],
    });
    expect(loadConfig({ ...oidc, TILL_OIDC_PROVIDER_ID: 'keycloak', TILL_OIDC_NAME: 'Acme Keycloak', TILL_OIDC_SCOPES: 'email, profile groups' }).social.oidc).toMatchObject({
      providerId: 'keycloak',
      name: 'Acme Keycloak',
      scopes: ['openid', 'email', 'profile', 'groups'],
    });
  });

  it('refuses an OpenID Connect set-up that cannot work, naming the variable', () => {
    const dataDir = tempDir();
    const oidc = { TILL_DATA_DIR: dataDir, TILL_OIDC_DISCOVERY_URL: 'https://id.example.com/.well-known/openid-configuration', TILL_OIDC_CLIENT_ID: 'till', TILL_OIDC_CLIENT_SECRET: 's3cret' };
    expect(() => loadConfig({ TILL_DATA_DIR: dataDir, TILL_OIDC_CLIENT_ID: 'till' })).toThrow('TILL_OIDC_CLIENT_ID is set but TILL_OIDC_DISCOVERY_URL is not');
    expect(() => loadConfig({ ...oidc, TILL_OIDC_CLIENT_SECRET: '' })).toThrow('TILL_OIDC_CLIENT_ID is set but TILL_OIDC_CLIENT_SECRET is not');
    expect(() => loadConfig({ TILL_DATA_DIR: dataDir, TILL_OIDC_DISCOVERY_URL: oidc.TILL_OIDC_DISCOVERY_URL })).toThrow(/TILL_OIDC_CLIENT_ID and TILL_OIDC_CLIENT_SECRET are not/);
    expect(() => loadConfig({ ...oidc, TILL_OIDC_DISCOVERY_URL: 'id.example.com' })).toThrow(/TILL_OIDC_DISCOVERY_URL is not a URL/);
    expect(() => loadConfig({ ...oidc, TILL_OIDC_DISCOVERY_URL: 'ftp://id.example.com/' })).toThrow(/TILL_OIDC_DISCOVERY_URL must start with https:\/\//);
    expect(() => loadConfig({ ...oidc, TILL_OIDC_PROVIDER_ID: 'Has Spaces' })).toThrow(/TILL_OIDC_PROVIDER_ID must be lowercase letters/);
    expect(() => loadConfig({ ...oidc, TILL_OIDC_PROVIDER_ID: 'credential' })).toThrow(/cannot be "credential"/);
    expect(() => loadConfig({ ...oidc, TILL_OIDC_PROVIDER_ID: 'github', TILL_GITHUB_CLIENT_ID: 'a', TILL_GITHUB_CLIENT_SECRET: 'b' })).toThrow(
      /TILL_OIDC_PROVIDER_ID "github" is already the id of the GitHub sign-in/,
    );
    expect(() => loadConfig({ ...oidc, TILL_OIDC_SCOPES: 'email "quoted"' })).toThrow(/TILL_OIDC_SCOPES has a scope that is not allowed/);
  });

  it('takes Stripe\'s three keys together, refuses some of them naming the missing ones, and checks each key\'s kind', () => {
    const base = { TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-config-')), TILL_SECRET: 'x'.repeat(32) };
    const keys = { TILL_STRIPE_SECRET_KEY: 'sk_test_abc', TILL_STRIPE_PUBLISHABLE_KEY: 'pk_test_abc', TILL_STRIPE_WEBHOOK_SECRET: 'whsec_abc' };
    expect(loadConfig(base).stripe).toBeNull();
    expect(loadConfig({ ...base, ...keys }).stripe).toEqual({ secretKey: 'sk_test_abc', publishableKey: 'pk_test_abc', webhookSecret: 'whsec_abc', apiBase: null });
    expect(() => loadConfig({ ...base, TILL_STRIPE_SECRET_KEY: 'sk_test_abc' })).toThrow(/missing: TILL_STRIPE_PUBLISHABLE_KEY, TILL_STRIPE_WEBHOOK_SECRET/);
    expect(() => loadConfig({ ...base, ...keys, TILL_STRIPE_SECRET_KEY: 'pk_test_abc' })).toThrow(/TILL_STRIPE_SECRET_KEY must be a Stripe secret/);
    expect(() => loadConfig({ ...base, ...keys, TILL_STRIPE_WEBHOOK_SECRET: 'abc' })).toThrow(/whsec_/);
    expect(() => loadConfig({ ...base, ...keys, TILL_STRIPE_API_BASE: 'not a url' })).toThrow(/TILL_STRIPE_API_BASE is not a URL/);
  });

  it('turns Discord and GitHub benefits on with all three of their variables, with the public services as default URLs', () => {
    const base = { TILL_DATA_DIR: mkdtempSync(join(tmpdir(), 'till-config-')), TILL_SECRET: 'x'.repeat(32) };
    const github = { TILL_GITHUB_BENEFITS_CLIENT_ID: 'Iv1.abc', TILL_GITHUB_BENEFITS_CLIENT_SECRET: 'shh', TILL_GITHUB_BENEFITS_TOKEN: 'ghp_abc' };
    const discord = { TILL_DISCORD_CLIENT_ID: '123', TILL_DISCORD_CLIENT_SECRET: 'shh', TILL_DISCORD_BOT_TOKEN: 'bot' };
    expect(loadConfig(base).benefits).toEqual({ github: null, discord: null });
    expect(loadConfig({ ...base, ...github, ...discord }).benefits).toEqual({
      github: { clientId: 'Iv1.abc', clientSecret: 'shh', token: 'ghp_abc', apiUrl: 'https://api.github.com', oauthUrl: 'https://github.com' },
      discord: { clientId: '123', clientSecret: 'shh', botToken: 'bot', apiUrl: 'https://discord.com/api/v10', oauthUrl: 'https://discord.com' },
    });
    expect(loadConfig({ ...base, ...github, TILL_GITHUB_API_URL: 'http://127.0.0.1:9/api/' }).benefits.github?.apiUrl).toBe('http://127.0.0.1:9/api');
    expect(() => loadConfig({ ...base, TILL_DISCORD_BOT_TOKEN: 'bot' })).toThrow(/missing: TILL_DISCORD_CLIENT_ID, TILL_DISCORD_CLIENT_SECRET/);
    expect(() => loadConfig({ ...base, TILL_GITHUB_API_URL: 'https://ghe.example/api/v3' })).toThrow(/TILL_GITHUB_API_URL is set but/);
    expect(() => loadConfig({ ...base, ...discord, TILL_DISCORD_API_URL: 'ftp://discord' })).toThrow(/TILL_DISCORD_API_URL must start with https:\/\//);
    // The sign-in app's variables are another thing: they do not turn benefits on.
    expect(loadConfig({ ...base, TILL_GITHUB_CLIENT_ID: 'a', TILL_GITHUB_CLIENT_SECRET: 'b' }).benefits.github).toBeNull();
  });
});
