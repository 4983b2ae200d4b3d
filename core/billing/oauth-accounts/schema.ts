import { CoreError } from '../../errors.js';

/** The services a customer connects an account of, for Discord and GitHub benefits (Polar's CustomerOAuthPlatform). */
export const OAUTH_PLATFORMS = ['github', 'discord'] as const;
export type OAuthPlatform = (typeof OAUTH_PLATFORMS)[number];

/** The platform whose account a benefit type needs. */
export const PLATFORM_OF = { github_repository: 'github', discord: 'discord' } as const satisfies Record<string, OAuthPlatform>;
export const PLATFORM_NAMES: Record<OAuthPlatform, string> = { github: 'GitHub', discord: 'Discord' };

export interface OAuthTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

/** A customer's account on a platform; tokens only when later calls need them (Discord), never serialized. */
/** What a customer (and Polar's CustomerPortalCustomer) sees of a connected account: never its tokens. */
export type OAuthAccountName = Pick<OAuthAccount, 'platform' | 'accountId' | 'accountUsername'>;

export interface OAuthAccount {
  id: string;
  organizationId: string;
  customerId: string;
  platform: OAuthPlatform;
  accountId: string;
  accountUsername: string | null;
  tokens: OAuthTokens | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** Till's OAuth app on one platform: where to send the customer, and what the callback's code is worth. */
export interface OAuthConnector {
  platform: OAuthPlatform;
  authorizeUrl(input: { state: string; redirectUri: string }): string;
  /** Exchanges the callback's code and reads the account; `tokens` are those worth keeping (null: none). */
  connect(input: { code: string; redirectUri: string; now: Date }): Promise<{ accountId: string; username: string | null; tokens: OAuthTokens | null }>;
  /** New tokens for a refresh token; undefined when the platform refuses it (the customer must connect again). */
  refresh?(refreshToken: string, now: Date): Promise<OAuthTokens | undefined>;
}

/** The platform refused or failed the connection (a spent code, a denied consent): the customer may try again. */
export class ConnectFailure extends CoreError {
  constructor(message: string) {
    super('bad_request', 'OAUTH_CONNECT_FAILED', message);
  }
}
