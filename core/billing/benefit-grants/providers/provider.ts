import type { Knex } from 'knex';
import type { Benefit } from '../../benefits/schema.js';
import type { BenefitGrant, GrantProperties } from '../schema.js';

/** A grant being applied: the benefit, the grant as stored so far, and the organization's time now. */
export interface GrantAction<B extends Benefit = Benefit> {
  trx: Knex.Transaction;
  now: Date;
  benefit: B;
  grant: BenefitGrant;
}

/**
 * How one benefit type takes effect. Each step answers the grant's new properties; a step that cannot be done
 * throws a GrantFailure, which is recorded on the grant (its `error`) instead of pretending it was done.
 */
export interface BenefitStrategy<B extends Benefit = Benefit> {
  grant(action: GrantAction<B>): Promise<GrantProperties>;
  revoke(action: GrantAction<B>): Promise<GrantProperties>;
  /** A subscription renewed; most types keep what they granted. */
  cycle(action: GrantAction<B>): Promise<GrantProperties>;
}

/** A grant step that could not be done, with Polar's error `type` and a message the seller can act on. */
export class GrantFailure extends Error {
  override name = 'GrantFailure';
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A third-party service a benefit gives access to (a Discord server's role, a GitHub repository). Adapters for
 * the real services implement it with their credentials; Till ships none configured.
 */
export interface AccessProvider {
  /** Gives `accountId` (the customer's account on the service) access to `target`. */
  grantAccess(target: Record<string, unknown>, accountId: string): Promise<void>;
  revokeAccess(target: Record<string, unknown>, accountId: string): Promise<void>;
}
