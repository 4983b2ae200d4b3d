import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { findBenefit } from '../benefits/repository.js';
import type { Benefit } from '../benefits/schema.js';
import { findCustomers } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import { sealKey } from '../oauth-accounts/connectors.js';
import { findOAuthAccount } from '../oauth-accounts/repository.js';
import { PLATFORM_NAMES, PLATFORM_OF } from '../oauth-accounts/schema.js';
import { isExternal, scheduleGrantSync } from './providers/external.js';
import { lockGrantById, saveGrantState } from './repository.js';
import type { BenefitGrant } from './schema.js';
import { emitGrantEvent } from './service.js';
import { stateOf } from './state.js';

const grantNotFound = () => new CoreError('not_found', 'BENEFIT_GRANT_NOT_FOUND', 'Benefit grant not found');
const invalid = (loc: string[], msg: string) => new CoreError('invalid', 'INVALID_BENEFIT_GRANT_UPDATE', msg, [{ loc: ['body', ...loc], msg, type: 'value_error' }]);

/**
 * A customer names which of their connected accounts a Discord or GitHub grant gives access to (Polar's
 * customerPortal.benefitGrants.update, and the portal's OAuth callback). The account must be one the customer
 * connected on that platform; the grant's job then gives it access (and takes it back from the account named
 * before, if any). Other benefit types have nothing to update: the grant is answered as it is.
 */
export async function connectGrantAccount(
  db: Database,
  clock: Clock,
  who: { organizationId: string; customerId: string },
  grantId: string,
  input: { benefitType: string; accountId: string | null },
): Promise<{ grant: BenefitGrant; customer: Customer; benefit: Benefit }> {
  return db.transaction(async (trx) => {
    const grant = await lockGrantById(trx, grantId);
    if (!grant || grant.organizationId !== who.organizationId || grant.customerId !== who.customerId) throw grantNotFound();
    const benefit = await findBenefit(trx, grant.benefitId, [who.organizationId]);
    const customer = (await findCustomers(trx, { id: who.customerId }, [who.organizationId]))[0];
    if (!benefit || !customer) throw grantNotFound();
    if (benefit.type !== input.benefitType) throw invalid(['benefit_type'], `This grant is of a ${benefit.type} benefit, not ${input.benefitType}`);
    if (!isExternal(benefit)) return { grant, customer, benefit };
    if (stateOf(grant) === 'revoked') throw new CoreError('forbidden', 'BENEFIT_GRANT_REVOKED', 'This benefit grant is revoked: there is nothing to connect an account to');
    const platform = PLATFORM_OF[benefit.type];
    if (input.accountId === null) throw invalid(['properties', 'account_id'], `Choose the ${PLATFORM_NAMES[platform]} account to give access to`);
    const account = await findOAuthAccount(trx, sealKey(), who.customerId, platform, input.accountId);
    if (!account) throw invalid(['properties', 'account_id'], `No ${PLATFORM_NAMES[platform]} account ${input.accountId} is connected: connect it from the portal first`);
    if (grant.properties.account_id === account.accountId && (stateOf(grant) === 'granted' || grant.error === null)) return { grant, customer, benefit };
    const now = clock.now();
    const next: BenefitGrant = {
      ...grant,
      properties: { ...grant.properties, account_id: account.accountId },
      previousProperties: grant.properties,
      error: null,
      modifiedAt: now,
    };
    if (!(await saveGrantState(trx, next, grant))) throw new CoreError('conflict', 'BENEFIT_GRANT_CHANGED', 'The grant changed meanwhile; try again');
    await scheduleGrantSync(trx, next, now);
    await emitGrantEvent(trx, clock, 'benefit_grant.updated', next, customer, benefit, grant);
    return { grant: next, customer, benefit };
  });
}
