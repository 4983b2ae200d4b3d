/**
 * The currencies a price may be set in (Polar's presentment currencies, the list @polar-sh/sdk 0.49
 * accepts) with the smallest amount a price may charge in each, in minor units. Polar takes Stripe's
 * minimums, raised where needed so that each is worth at least USD 0.50.
 */
export const MINIMUM_AMOUNTS = {
  aed: 200, all: 5000, amd: 20000, aoa: 50000, ars: 75000, aud: 70, awg: 100, azn: 100, bam: 100, bbd: 200,
  bdt: 7000, bif: 2000, bmd: 100, bnd: 100, bob: 500, brl: 250, bsd: 100, bwp: 1000, bzd: 200, cad: 70,
  cdf: 200000, chf: 50, clp: 500, cny: 500, cop: 200000, crc: 30000, cve: 5000, czk: 1500, djf: 100, dkk: 320,
  dop: 4000, dzd: 7000, egp: 3000, etb: 8000, eur: 50, fjd: 200, fkp: 100, gbp: 40, gel: 200, gip: 100,
  gmd: 4000, gnf: 5000, gtq: 500, gyd: 20000, hkd: 400, hnl: 2000, htg: 7000, huf: 17500, idr: 900000, ils: 150,
  inr: 6000, isk: 7000, jmd: 8000, jpy: 80, kes: 7000, kgs: 5000, khr: 300000, kmf: 500, krw: 800, kyd: 100,
  kzt: 30000, lak: 2000000, lkr: 20000, lrd: 10000, lsl: 1000, mad: 500, mdl: 1000, mga: 3000, mkd: 5000, mnt: 200000,
  mop: 500, mur: 5000, mvr: 800, mwk: 100000, mxn: 900, myr: 200, mzn: 5000, nad: 1000, ngn: 70000, nio: 2000,
  nok: 500, npr: 8000, nzd: 90, pab: 100, pen: 200, pgk: 300, php: 3500, pkr: 20000, pln: 200, pyg: 4000,
  qar: 200, ron: 250, rsd: 6000, rwf: 1000, sar: 200, sbd: 400, scr: 800, sek: 500, sgd: 70, shp: 100,
  sos: 50000, srd: 2000, szl: 1000, thb: 2000, tjs: 500, top: 200, try: 3000, ttd: 400, twd: 2000, tzs: 200000,
  uah: 3000, ugx: 2000, usd: 50, uyu: 2000, uzs: 700000, vnd: 20000, vuv: 100, wst: 200, xaf: 500, xcd: 200,
  xcg: 100, xof: 500, xpf: 100, yer: 20000, zar: 900, zmw: 1000,
} as const satisfies Record<string, number>;

export type Currency = keyof typeof MINIMUM_AMOUNTS;

export const CURRENCIES = Object.keys(MINIMUM_AMOUNTS) as [Currency, ...Currency[]];

/** The largest amount a price may charge, in minor units, in any currency (Polar's single ceiling). */
export const MAXIMUM_AMOUNT = 99_999_999;

/** Currencies without minor units: their amounts are whole units (Stripe's list). */
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);

/** An amount in minor units as a person reads it: `formatAmount(50, 'usd')` is "0.50 USD". */
export function formatAmount(amount: number, currency: string): string {
  const major = ZERO_DECIMAL.has(currency) ? String(amount) : (amount / 100).toFixed(2);
  return `${major} ${currency.toUpperCase()}`;
}
