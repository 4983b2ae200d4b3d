import type { Knex } from 'knex';
import { scheduleJob } from '../../../jobs/jobs.js';
import type { Benefit } from '../../benefits/schema.js';
import type { BenefitGrant } from '../schema.js';
import { GrantDeferred, GrantFailure, type AccessProvider, type BenefitStrategy, type GrantAction } from './provider.js';

export type ExternalBenefit = Extract<Benefit, { type: 'discord' | 'github_repository' }>;

export const SERVICE_NAMES = { discord: 'Discord', github_repository: 'GitHub' } as const;

/** The job that applies an external grant on its service (grant, account change, revoke), retried with backoff. */
export const GRANT_SYNC_JOB = 'benefit_grant.sync';

/** The access providers configured on this server, by benefit type; none unless an adapter is registered. */
const providers: { discord?: AccessProvider; github_repository?: AccessProvider } = {};

/** Registers (or with `undefined`, removes) the adapter that grants a type's access (tilld, from its configuration). */
export function configureAccessProvider(type: ExternalBenefit['type'], provider: AccessProvider | undefined): void {
  providers[type] = provider;
}

export const isExternal = (benefit: Benefit): benefit is ExternalBenefit => benefit.type === 'discord' || benefit.type === 'github_repository';

/** What the grant targets on the service, as Polar shows it in the grant's properties. */
export function targetOf(benefit: ExternalBenefit): Record<string, unknown> {
  if (benefit.type === 'discord') return { guild_id: benefit.properties.guild_id, role_id: benefit.properties.role_id };
  const { repository_owner, repository_name, permission } = benefit.properties;
  return { repository_owner, repository_name, permission };
}

/** The provider of a benefit's type, or the grant's recorded ProviderNotConfigured. */
export function providerFor(type: ExternalBenefit['type']): AccessProvider {
  const provider = providers[type];
  if (!provider) {
    throw new GrantFailure(
      'ProviderNotConfigured',
      `${SERVICE_NAMES[type]} access cannot be granted: this Till server has no ${SERVICE_NAMES[type]} integration configured`,
    );
  }
  return provider;
}

/** The account the customer connected on the service, kept in the grant's properties (`account_id`). */
export function accountOf(grant: BenefitGrant, type: ExternalBenefit['type']): string {
  const accountId = grant.properties.account_id;
  if (typeof accountId !== 'string' || accountId === '') {
    throw new GrantFailure('BenefitActionRequired', `The customer has not connected a ${SERVICE_NAMES[type]} account yet`);
  }
  return accountId;
}

/** Schedules the grant's job now (on the organization's clock): the service is called outside the caller's transaction. */
export async function scheduleGrantSync(trx: Knex.Transaction | Knex, grant: Pick<BenefitGrant, 'id' | 'organizationId'>, now: Date): Promise<void> {
  await scheduleJob(trx, { organizationId: grant.organizationId, kind: GRANT_SYNC_JOB, subjectId: grant.id, runAt: now });
}

/**
 * discord and github_repository: access on a third-party service, through its provider. Without a provider (no
 * credentials configured) or without the customer's account, the grant records why it is not granted; otherwise
 * the grant's job calls the service (benefit_grant.sync, sync.ts) and marks the grant granted once it answered, so
 * no purchase waits on GitHub or Discord and a failure is retried instead of failing the purchase.
 */
export const externalAccess: BenefitStrategy<ExternalBenefit> = {
  async grant(action: GrantAction<ExternalBenefit>) {
    providerFor(action.benefit.type);
    accountOf(action.grant, action.benefit.type);
    await scheduleGrantSync(action.trx, action.grant, action.now);
    throw new GrantDeferred();
  },
  async revoke(action) {
    // Access given on the service is taken back by the grant's job, retried until the service confirms it.
    if (typeof action.grant.properties.granted_account_id === 'string') await scheduleGrantSync(action.trx, action.grant, action.now);
    return action.grant.properties;
  },
  async cycle(action) {
    return action.grant.properties;
  },
};
