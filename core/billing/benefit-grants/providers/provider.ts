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

/**
 * A grant step that could not be done, with Polar's error `type` and a message the seller can act on. `retriable`:
 * the service's trouble (unreachable, rate limited, refusing for now), so the grant's job tries again later.
 */
export class GrantFailure extends Error {
  override name = 'GrantFailure';
  constructor(
    readonly type: string,
    message: string,
    readonly retriable = false,
  ) {
    super(message);
  }
}

/** The step goes on outside the transaction (the grant's job calls the service): the grant stays pending, without error. */
export class GrantDeferred extends Error {
  override name = 'GrantDeferred';
  constructor() {
    super('The grant is applied by its job');
  }
}

/** The customer's account on the service, as connected through OAuth from the portal. */
export interface ConnectedAccount {
  id: string;
  username: string | null;
  /** A live OAuth access token of the customer (refreshed when it expired); a GrantFailure when there is none. */
  accessToken(): Promise<string>;
}

/**
 * A third-party service a benefit gives access to (a Discord server's role, a GitHub repository). Adapters for the
 * real services (core/integrations) implement it with the server's credentials. `target` is what the grant targets
 * (guild_id, role_id, kick_member; repository_owner, repository_name, permission).
 */
export interface AccessProvider {
  /** Gives the account access to `target`; answers what to keep on the grant to take it back (an invitation id). */
  grantAccess(target: Record<string, unknown>, account: ConnectedAccount): Promise<Record<string, unknown>>;
  /** Takes back what grantAccess gave: `granted` holds the grant's properties (account id, username, invitation id). */
  revokeAccess(target: Record<string, unknown>, granted: Record<string, unknown>): Promise<void>;
}
