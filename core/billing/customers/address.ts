import { z } from 'zod';

/**
 * Countries a billing address may name: ISO 3166-1 alpha-2, without the ones Polar refuses under US trade embargoes
 * (CU, IR, KP, SY, RU). The same 244 codes as the SDK's `AddressInput.country`.
 */
export const ADDRESS_COUNTRIES = (
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD ' +
  'CF CG CH CI CK CL CM CN CO CR CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG ' +
  'GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IS IT JE JM JO JP KE KG KH KI KM KN KR KW ' +
  'KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF ' +
  'NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RW SA SB SC SD SE SG SH SI SJ SK SL SM ' +
  'SN SO SR SS ST SV SX SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE ' +
  'YT ZA ZM ZW'
).split(' ') as [string, ...string[]];

const US_STATES = 'AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC'.split(' ');
const CA_PROVINCES = 'AB BC MB NB NL NS NT NU ON PE QC SK YT'.split(' ');
/** Where Polar checks the state and writes it with a country prefix (`US-NY`, `CA-QC`). */
const SUBDIVISIONS: Record<string, readonly string[]> = { US: US_STATES, CA: CA_PROVINCES };

/** Text without NUL characters, which PostgreSQL refuses to store (a 500 otherwise). */
export const Text = z.string().refine((value) => !value.includes('\u0000'), 'Must not contain NUL characters');

// Polar turns empty address lines into null.
const Line = Text.max(256).nullish().transform((value) => (value?.trim() ? value.trim() : null));

/** A billing address as Polar takes it: `country` is required; US and CA states are normalized to `US-NY`. */
export const AddressInput = z
  .object({
    line1: Line,
    line2: Line,
    postal_code: Line,
    city: Line,
    state: Line,
    country: z.string().transform((value) => value.trim().toUpperCase()).pipe(z.enum(ADDRESS_COUNTRIES, { error: 'Not a supported ISO 3166-1 alpha-2 country code' })),
  })
  .transform((address, context) => {
    const subdivisions = SUBDIVISIONS[address.country];
    if (!subdivisions || address.state === null) return address;
    const state = address.state.toUpperCase().replace(new RegExp(`^${address.country}-`), '');
    if (!subdivisions.includes(state)) {
      context.addIssue({ code: 'custom', path: ['state'], message: `Invalid ${address.country} state`, input: address.state });
      return z.NEVER;
    }
    return { ...address, state: `${address.country}-${state}` };
  });
export type Address = z.output<typeof AddressInput>;
