import type { BetterAuthOptions } from 'better-auth';
import { genericOAuth } from 'better-auth/plugins/generic-oauth';

/** A client registered at a provider: its id and secret. */
export interface OAuthClientSettings {
  clientId: string;
  clientSecret: string;
}

/** Any OpenID Connect provider, found through its discovery document (`/.well-known/openid-configuration`). */
export interface OidcSettings extends OAuthClientSettings {
  /** Names the provider in URLs (`/api/auth/callback/<id>`) and in the account table; default `oidc`. */
  providerId: string;
  /** What the button says: "Continue with <name>". */
  name: string;
  discoveryUrl: string;
  /** Asked of the provider; `openid` is always added. */
  scopes: string[];
}

/** Sign-in through other services (SPEC §8 social errors): each is on when its client is configured. */
export interface SocialSettings {
  github?: OAuthClientSettings;
  google?: OAuthClientSettings;
  oidc?: OidcSettings;
}

export const DEFAULT_OIDC_PROVIDER_ID = 'oidc';
export const DEFAULT_OIDC_NAME = 'SSO';
/** Without `email`, a provider's answer has no address and sign-in fails (USER_EMAIL_NOT_FOUND). */
export const DEFAULT_OIDC_SCOPES = ['openid', 'email', 'profile'];

/** The account row of a password sign-in; every other providerId is a linked service. */
export const CREDENTIAL_PROVIDER_ID = 'credential';

/** The built-in providers' ids and what their buttons call them. */
export const BUILT_IN_NAMES: Record<string, string> = { github: 'GitHub', google: 'Google' };

/**
 * Better Auth's `socialProviders` option: GitHub and Google, each when its client is set. With
 * `requireEmailVerification` (TILL_REQUIRE_EMAIL_VERIFICATION) an account whose address neither the provider
 * nor a mailed link has verified gets no session (`?error=email_not_verified`, a verification mail sent),
 * as for a password sign-in; Better Auth leaves providers out of that setting unless told per provider.
 */
export function socialProvidersOption(social: SocialSettings | undefined, requireEmailVerification = false) {
  return {
    ...(social?.github ? { github: { clientId: social.github.clientId, clientSecret: social.github.clientSecret, requireEmailVerification } } : {}),
    ...(social?.google ? { google: { clientId: social.google.clientId, clientSecret: social.google.clientSecret, requireEmailVerification } } : {}),
  };
}

/**
 * Better Auth's generic OAuth plugin, holding the OpenID Connect provider when one is configured. It is
 * always in the plugin list (empty without one), so the plugin tuple's type does not depend on the settings.
 * Discovery runs when Better Auth starts; a provider that cannot be reached then is tried again on first use.
 */
export function oidcPlugin(social: SocialSettings | undefined, requireEmailVerification = false) {
  const oidc = social?.oidc;
  return genericOAuth({
    config: oidc
      ? [
          {
            providerId: oidc.providerId,
            name: oidc.name,
            discoveryUrl: oidc.discoveryUrl,
            clientId: oidc.clientId,
            clientSecret: oidc.clientSecret,
            scopes: oidc.scopes,
            pkce: true,
            requireEmailVerification,
          },
        ]
      : [],
  });
}

/**
 * Account linking (SPEC §8: SOCIAL_ACCOUNT_ALREADY_LINKED, FAILED_TO_UNLINK_LAST_ACCOUNT). No provider is
 * trusted blindly: an identity joins an existing account only when the provider says its address is
 * verified, and only for the same address (`allowDifferentEmails: false`); signing in that way also needs
 * the local address verified (Better Auth's default). The last way to sign in can never be unlinked.
 */
export const ACCOUNT_LINKING = {
  enabled: true,
  trustedProviders: [] as string[],
  allowDifferentEmails: false,
  allowUnlinkingAll: false,
} as const;

export interface SignInProvider {
  id: string;
  name: string;
}

/** The configured providers, in the order their buttons appear, read from a Better Auth instance's options. */
export function signInProviders(options: Pick<BetterAuthOptions, 'socialProviders' | 'plugins'>): SignInProvider[] {
  const builtIn = Object.entries(options.socialProviders ?? {})
    .filter(([, config]) => config && typeof config === 'object')
    .map(([id]) => ({ id, name: BUILT_IN_NAMES[id] ?? id }));
  const generic = options.plugins?.find((plugin) => plugin.id === 'generic-oauth') as
    | { options?: { config?: { providerId: string; name?: string }[] } }
    | undefined;
  const oidc = (generic?.options?.config ?? []).map((config) => ({ id: config.providerId, name: config.name ?? config.providerId }));
  return [...builtIn, ...oidc];
}

/** How an account row is named on the page: the password, a configured provider, or its raw id. */
export function providerName(providerId: string, providers: SignInProvider[]): string {
  if (providerId === CREDENTIAL_PROVIDER_ID) return 'Password';
  return providers.find((provider) => provider.id === providerId)?.name ?? BUILT_IN_NAMES[providerId] ?? providerId;
}
