import type { Benefit } from '../../benefits/schema.js';
import { GrantFailure, type AccessProvider, type BenefitStrategy, type GrantAction } from './provider.js';

type ExternalBenefit = Extract<Benefit, { type: 'discord' | 'github_repository' }>;

const SERVICE_NAMES = { discord: 'Discord', github_repository: 'GitHub' } as const;

/** The access providers configured on this server, by benefit type; none unless an adapter is registered. */
const providers: { discord?: AccessProvider; github_repository?: AccessProvider } = {};

/** Registers (or with `undefined`, removes) the adapter that grants a type's access. */
export function configureAccessProvider(type: ExternalBenefit['type'], provider: AccessProvider | undefined): void {
  providers[type] = provider;
}

/** What the grant targets on the service, and the properties Polar shows for it. */
function targetOf(benefit: ExternalBenefit): Record<string, unknown> {
  if (benefit.type === 'discord') return { guild_id: benefit.properties.guild_id, role_id: benefit.properties.role_id };
  const { repository_owner, repository_name, permission } = benefit.properties;
  return { repository_owner, repository_name, permission };
}

function providerFor(benefit: ExternalBenefit): AccessProvider {
  const provider = providers[benefit.type];
  if (!provider) {
    throw new GrantFailure(
      'ProviderNotConfigured',
      `${SERVICE_NAMES[benefit.type]} access cannot be granted: this Till server has no ${SERVICE_NAMES[benefit.type]} integration configured`,
    );
  }
  return provider;
}

/** The account the customer connected on the service, kept in the grant's properties (`account_id`). */
function accountOf(action: GrantAction<ExternalBenefit>): string {
  const accountId = action.grant.properties.account_id;
  if (typeof accountId !== 'string' || accountId === '') {
    throw new GrantFailure('BenefitActionRequired', `The customer has not connected a ${SERVICE_NAMES[action.benefit.type]} account yet`);
  }
  return accountId;
}

/**
 * discord and github_repository: access on a third-party service, through its provider. Without a provider
 * (no credentials configured) or without the customer's account, the grant records why it is not granted.
 */
export const externalAccess: BenefitStrategy<ExternalBenefit> = {
  async grant(action) {
    const provider = providerFor(action.benefit);
    const accountId = accountOf(action);
    const target = targetOf(action.benefit);
    await provider.grantAccess(target, accountId);
    return { ...action.grant.properties, ...target, account_id: accountId, granted_account_id: accountId };
  },
  async revoke(action) {
    const grantedAccountId = action.grant.properties.granted_account_id;
    // Nothing was given on the service (the grant failed before): nothing to take back.
    if (typeof grantedAccountId !== 'string') return action.grant.properties;
    await providerFor(action.benefit).revokeAccess(targetOf(action.benefit), grantedAccountId);
    const { granted_account_id: _, ...rest } = action.grant.properties;
    return rest;
  },
  async cycle(action) {
    return action.grant.properties;
  },
};
