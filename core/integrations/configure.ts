import { configureAccessProvider } from '../billing/benefit-grants/providers/external.js';
import { configureOAuthConnectors } from '../billing/oauth-accounts/connectors.js';
import { tokenSealKey } from '../billing/oauth-accounts/seal.js';
import { discordAccess, discordConnector, type DiscordBenefitSettings } from './discord.js';
import { githubAccess, githubConnector, type GitHubBenefitSettings } from './github.js';

/**
 * Sets up this server's Discord and GitHub integrations (tilld at start): each configured one grants its benefits and
 * lets customers connect their account; one left out records ProviderNotConfigured on its grants. The registry is
 * per process, as the daemon is: every start sets both, so no earlier configuration lingers.
 */
export function configureBenefitIntegrations(settings: { github: GitHubBenefitSettings | null; discord: DiscordBenefitSettings | null }, secret: string): void {
  configureAccessProvider('github_repository', settings.github ? githubAccess(settings.github) : undefined);
  configureAccessProvider('discord', settings.discord ? discordAccess(settings.discord) : undefined);
  configureOAuthConnectors(
    { ...(settings.github ? { github: githubConnector(settings.github) } : {}), ...(settings.discord ? { discord: discordConnector(settings.discord) } : {}) },
    tokenSealKey(secret),
  );
}
