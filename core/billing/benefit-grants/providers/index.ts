import type { Benefit } from '../../benefits/schema.js';
import { custom, downloadables, licenseKeys, meterCredit } from './builtin.js';
import { externalAccess } from './external.js';
import type { BenefitStrategy } from './provider.js';

const STRATEGIES: { [T in Benefit['type']]: BenefitStrategy<Extract<Benefit, { type: T }>> } = {
  custom,
  downloadables,
  license_keys: licenseKeys,
  meter_credit: meterCredit,
  discord: externalAccess,
  github_repository: externalAccess,
};

/** The strategy that applies a benefit of this type. */
export const strategyFor = <B extends Benefit>(benefit: B) => STRATEGIES[benefit.type] as unknown as BenefitStrategy<B>;

export { configureAccessProvider } from './external.js';
export { GrantDeferred, GrantFailure, type AccessProvider, type ConnectedAccount, type BenefitStrategy, type GrantAction } from './provider.js';
