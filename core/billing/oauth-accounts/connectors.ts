import type { OAuthConnector, OAuthPlatform } from './schema.js';

/** Till's OAuth apps configured on this server (TILL_GITHUB_BENEFITS_*, TILL_DISCORD_*), and the token sealing key. */
const configured: { connectors: Partial<Record<OAuthPlatform, OAuthConnector>>; sealKey: Buffer | null } = { connectors: {}, sealKey: null };

/** Sets this server's OAuth apps (tilld, from its configuration); platforms left out cannot be connected. */
export function configureOAuthConnectors(connectors: Partial<Record<OAuthPlatform, OAuthConnector>>, sealKey: Buffer): void {
  configured.connectors = { ...connectors };
  configured.sealKey = sealKey;
}

export const connectorFor = (platform: OAuthPlatform): OAuthConnector | undefined => configured.connectors[platform];

/** The key tokens are sealed with; set with the connectors at start. */
export function sealKey(): Buffer {
  if (!configured.sealKey) throw new Error('OAuth connectors are not configured: configureOAuthConnectors runs when tilld starts');
  return configured.sealKey;
}
