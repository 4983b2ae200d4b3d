import { describe, expect, it } from 'vitest';
import { parseTaxId } from './tax-id.js';

describe('parseTaxId', () => {
  it.each([
    ['FR61954506077', 'FR', ['FR61954506077', 'eu_vat']],
    ['GB980780684', 'GB', ['980780684', 'gb_vat']],
    ['91-1144442', 'US', ['911144442', 'us_ein']],
    ['234567899RT0001', 'CA', ['234567899RT0001', 'ca_gst_hst']],
    ['234567899 RT0001', 'CA', ['234567899RT0001', 'ca_gst_hst']],
    ['234567899', 'CA', ['234567899', 'ca_bn']],
    ['de 123.456.789', 'DE', ['DE123456789', 'eu_vat']],
    ['GR123456789', 'GR', ['EL123456789', 'eu_vat']],
    ['CHE-123.456.789 MWST', 'CH', ['CHE123456789MWST', 'ch_vat']],
  ] as const)('reads %s in %s as %j', (number, country, expected) => {
    expect(parseTaxId(number, country)).toEqual(expected);
  });

  it.each([
    ['FR61954506077', 'US'],
    ['12345', 'FR'],
    ['911144442', 'AQ'],
    ['', 'US'],
  ])('places no tax ID %j in %s', (number, country) => {
    expect(parseTaxId(number, country)).toBeUndefined();
  });
});
