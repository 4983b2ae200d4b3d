import type { Benefit } from '../../benefits/schema.js';
import { grantLicenseKey, licenseKeyGrantProperties, revokeLicenseKey } from '../../license-keys/issue.js';
import type { Knex } from 'knex';
import { meterCreditRecorded } from '../../../metering/customer-meters.js';
import { recordMeterCredit } from '../repository.js';
import type { BenefitStrategy } from './provider.js';

type CreditEntry = Parameters<typeof recordMeterCredit>[1];

/** One line of the meter-credit ledger, and metering told of it (its meter.credited / meter.reset event, a refresh). */
async function credit(trx: Knex.Transaction, entry: CreditEntry): Promise<void> {
  await recordMeterCredit(trx, entry);
  const { grantId: _, ...recorded } = entry;
  await meterCreditRecorded(trx, recorded);
}

type Of<T extends Benefit['type']> = Extract<Benefit, { type: T }>;

/** custom: nothing to do on grant; the benefit's note is what the customer sees (customer state, portal). */
export const custom: BenefitStrategy<Of<'custom'>> = {
  grant: async () => ({}),
  revoke: async () => ({}),
  cycle: async (action) => action.grant.properties,
};

/** downloadables: the grant lists the files the customer may download (those of the benefit not archived). */
export const downloadables: BenefitStrategy<Of<'downloadables'>> = {
  grant: async ({ benefit }) => ({ files: benefit.properties.files.filter((id) => !benefit.properties.archived[id]) }),
  revoke: async () => ({ files: [] }),
  cycle: async (action) => action.grant.properties,
};

/** license_keys: one key per grant, re-enabled (not replaced) when the grant comes back. */
export const licenseKeys: BenefitStrategy<Of<'license_keys'>> = {
  async grant({ trx, now, benefit, grant }) {
    const existingId = typeof grant.properties.license_key_id === 'string' ? grant.properties.license_key_id : null;
    return licenseKeyGrantProperties(await grantLicenseKey(trx, now, benefit, grant.customerId, existingId));
  },
  async revoke({ trx, now, benefit, grant }) {
    const id = grant.properties.license_key_id;
    if (typeof id === 'string') await revokeLicenseKey(trx, now, id, grant.customerId, benefit.id);
    return grant.properties;
  },
  cycle: async (action) => action.grant.properties,
};

/**
 * meter_credit: credits the benefit's units on the meter (the `meter_credits` ledger metering reads). Each cycle
 * credits again, after a reset unless the benefit rolls unused units over; revoking takes back the last credit.
 */
export const meterCredit: BenefitStrategy<Of<'meter_credit'>> = {
  async grant({ trx, now, benefit, grant }) {
    const { units, rollover, meter_id } = benefit.properties;
    await credit(trx, { organizationId: grant.organizationId, customerId: grant.customerId, meterId: meter_id, grantId: grant.id, kind: 'credited', units, rollover, at: now });
    return { last_credited_meter_id: meter_id, last_credited_units: units, last_credited_at: now.toISOString() };
  },
  async revoke({ trx, now, grant }) {
    const meterId = grant.properties.last_credited_meter_id;
    const units = grant.properties.last_credited_units;
    if (typeof meterId === 'string' && typeof units === 'number' && units > 0) {
      await credit(trx, { organizationId: grant.organizationId, customerId: grant.customerId, meterId, grantId: grant.id, kind: 'credited', units: -units, rollover: true, at: now });
    }
    return {};
  },
  async cycle({ trx, now, benefit, grant }) {
    const { units, rollover, meter_id } = benefit.properties;
    const base = { organizationId: grant.organizationId, customerId: grant.customerId, meterId: meter_id, grantId: grant.id, rollover, at: now };
    if (!rollover) await credit(trx, { ...base, kind: 'reset', units: 0 });
    await credit(trx, { ...base, kind: 'credited', units });
    return { last_credited_meter_id: meter_id, last_credited_units: units, last_credited_at: now.toISOString() };
  },
};
