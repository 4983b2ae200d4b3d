/**
 * Tax IDs as Polar keeps them: the number, checked against the billing country, stored with its format as
 * `[value, format]` (e.g. `["FR61954506077", "eu_vat"]`). Polar validates with python-stdnum, checksums included;
 * Till checks the shape of each format only (a mistyped digit passes), which is what its invoices need.
 */

export const TAX_ID_FORMATS = [
  'ad_nrt', 'ae_trn', 'ar_cuit', 'au_abn', 'au_arn', 'bg_uic', 'bh_vat', 'bo_tin', 'br_cnpj', 'br_cpf', 'ca_bn',
  'ca_gst_hst', 'ca_pst_bc', 'ca_pst_mb', 'ca_pst_sk', 'ca_qst', 'ch_uid', 'ch_vat', 'cl_tin', 'cn_tin', 'co_nit',
  'cr_tin', 'de_stn', 'do_rcn', 'ec_ruc', 'eg_tin', 'es_cif', 'eu_oss_vat', 'eu_vat', 'gb_vat', 'ge_vat', 'hk_br',
  'hr_oib', 'hu_tin', 'id_npwp', 'il_vat', 'in_gst', 'is_vat', 'jp_cn', 'jp_rn', 'jp_trn', 'ke_pin', 'kr_brn', 'kz_bin',
  'li_uid', 'mk_vat', 'mx_rfc', 'my_frp', 'my_itn', 'my_sst', 'mu_tan', 'ng_tin', 'no_vat', 'no_voec', 'nz_gst', 'om_vat',
  'pe_ruc', 'ph_tin', 'ro_tin', 'rs_pib', 'ru_inn', 'ru_kpp', 'sa_vat', 'sg_gst', 'sg_uen', 'si_tin', 'sv_nit', 'th_vat',
  'tr_tin', 'tw_vat', 'ua_vat', 'us_ein', 'uy_ruc', 've_rif', 'vn_tin', 'za_vat',
] as const;
export type TaxIdFormat = (typeof TAX_ID_FORMATS)[number];
export type TaxId = [value: string, format: TaxIdFormat];

// VAT prefixes of EU member states (Greece is EL; XI is Northern Ireland).
const EU_VAT = /^(AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|PT|RO|SE|SI|SK|XI)[0-9A-Z]{2,12}$/;

/** The shape of each format once compacted (upper case, no spaces or separators), and a prefix some drop. */
const FORMATS: Record<TaxIdFormat, { pattern: RegExp; strip?: RegExp }> = {
  ad_nrt: { pattern: /^[A-Z]\d{6}[A-Z]$/ },
  ae_trn: { pattern: /^\d{15}$/ },
  ar_cuit: { pattern: /^\d{11}$/ },
  au_abn: { pattern: /^\d{11}$/ },
  au_arn: { pattern: /^\d{12}$/ },
  bg_uic: { pattern: /^(\d{9}|\d{13})$/ },
  bh_vat: { pattern: /^\d{15}$/ },
  bo_tin: { pattern: /^\d{7,12}$/ },
  br_cnpj: { pattern: /^\d{14}$/ },
  br_cpf: { pattern: /^\d{11}$/ },
  ca_bn: { pattern: /^\d{9}$/ },
  ca_gst_hst: { pattern: /^\d{9}RT\d{4}$/ },
  ca_pst_bc: { pattern: /^PST\d{8}$/ },
  ca_pst_mb: { pattern: /^\d{7,8}$/ },
  ca_pst_sk: { pattern: /^\d{7}$/ },
  ca_qst: { pattern: /^\d{10}TQ\d{4}$/ },
  ch_uid: { pattern: /^CHE\d{9}$/ },
  ch_vat: { pattern: /^CHE\d{9}(MWST|TVA|IVA)$/ },
  cl_tin: { pattern: /^\d{7,8}[0-9K]$/ },
  cn_tin: { pattern: /^[0-9A-Z]{18}$/ },
  co_nit: { pattern: /^\d{10}$/ },
  cr_tin: { pattern: /^\d{9,12}$/ },
  de_stn: { pattern: /^\d{10,13}$/ },
  do_rcn: { pattern: /^(\d{9}|\d{11})$/ },
  ec_ruc: { pattern: /^\d{13}$/ },
  eg_tin: { pattern: /^\d{9}$/ },
  es_cif: { pattern: /^[A-Z]\d{7}[0-9A-Z]$/ },
  eu_oss_vat: { pattern: /^EU\d{9}$/ },
  eu_vat: { pattern: EU_VAT },
  gb_vat: { pattern: /^(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/, strip: /^GB/ },
  ge_vat: { pattern: /^\d{9}$/ },
  hk_br: { pattern: /^\d{8}$/ },
  hr_oib: { pattern: /^\d{11}$/, strip: /^HR/ },
  hu_tin: { pattern: /^\d{11}$/ },
  id_npwp: { pattern: /^\d{15,16}$/ },
  il_vat: { pattern: /^\d{9}$/ },
  in_gst: { pattern: /^\d{2}[A-Z]{5}\d{4}[A-Z][1-9A-Z]Z[0-9A-Z]$/ },
  is_vat: { pattern: /^\d{5,6}$/ },
  jp_cn: { pattern: /^\d{13}$/ },
  jp_rn: { pattern: /^\d{5}$/ },
  jp_trn: { pattern: /^T\d{13}$/ },
  ke_pin: { pattern: /^[A-Z]\d{9}[A-Z]$/ },
  kr_brn: { pattern: /^\d{10}$/ },
  kz_bin: { pattern: /^\d{12}$/ },
  li_uid: { pattern: /^CHE\d{9}$/ },
  mk_vat: { pattern: /^MK\d{13}$/ },
  mx_rfc: { pattern: /^[A-Z&Ñ]{3,4}\d{6}[0-9A-Z]{3}$/ },
  my_frp: { pattern: /^\d{8}$/ },
  my_itn: { pattern: /^C\d{10}$/ },
  my_sst: { pattern: /^[A-Z]\d{2}\d{4}\d{8}$/ },
  mu_tan: { pattern: /^\d{8}$/ },
  ng_tin: { pattern: /^\d{8}(\d{4})?$/ },
  no_vat: { pattern: /^\d{9}MVA$/ },
  no_voec: { pattern: /^\d{7}$/ },
  nz_gst: { pattern: /^\d{8,9}$/ },
  om_vat: { pattern: /^OM\d{10}$/ },
  pe_ruc: { pattern: /^\d{11}$/ },
  ph_tin: { pattern: /^\d{9,14}$/ },
  ro_tin: { pattern: /^\d{13}$/ },
  rs_pib: { pattern: /^\d{9}$/ },
  ru_inn: { pattern: /^(\d{10}|\d{12})$/ },
  ru_kpp: { pattern: /^\d{9}$/ },
  sa_vat: { pattern: /^\d{15}$/ },
  sg_gst: { pattern: /^[A-Z]\d{8}[A-Z]$/ },
  sg_uen: { pattern: /^(\d{8,9}[A-Z]|[TSR]\d{2}[A-Z]{2}\d{4}[A-Z])$/ },
  si_tin: { pattern: /^\d{8}$/, strip: /^SI/ },
  sv_nit: { pattern: /^\d{14}$/ },
  th_vat: { pattern: /^\d{13}$/ },
  tr_tin: { pattern: /^\d{10}$/ },
  tw_vat: { pattern: /^\d{8}$/ },
  ua_vat: { pattern: /^\d{9,12}$/ },
  us_ein: { pattern: /^\d{9}$/ },
  uy_ruc: { pattern: /^\d{12}$/ },
  ve_rif: { pattern: /^[VEJPG]\d{9}$/ },
  vn_tin: { pattern: /^(\d{10}|\d{13})$/ },
  za_vat: { pattern: /^4\d{9}$/ },
};

/** The formats a country's tax IDs may take, tried in this order (Polar's table). */
const COUNTRY_FORMATS: Record<string, readonly TaxIdFormat[]> = {
  AD: ['ad_nrt'], AE: ['ae_trn'], AR: ['ar_cuit'], AT: ['eu_vat'], AU: ['au_abn', 'au_arn'], BE: ['eu_vat'],
  BG: ['bg_uic', 'eu_vat'], BH: ['bh_vat'], BO: ['bo_tin'], BR: ['br_cnpj', 'br_cpf'],
  CA: ['ca_gst_hst', 'ca_pst_bc', 'ca_pst_mb', 'ca_pst_sk', 'ca_qst', 'ca_bn'], CH: ['ch_uid', 'ch_vat'], CL: ['cl_tin'],
  CN: ['cn_tin'], CO: ['co_nit'], CR: ['cr_tin'], CY: ['eu_vat'], CZ: ['eu_vat'], DE: ['de_stn', 'eu_vat'], DK: ['eu_vat'],
  DO: ['do_rcn'], EC: ['ec_ruc'], EE: ['eu_vat'], EG: ['eg_tin'], ES: ['es_cif', 'eu_vat'], FI: ['eu_vat'], FR: ['eu_vat'],
  GB: ['gb_vat'], GE: ['ge_vat'], GR: ['eu_vat'], HK: ['hk_br'], HR: ['hr_oib', 'eu_vat'], HU: ['hu_tin', 'eu_vat'],
  ID: ['id_npwp'], IE: ['eu_vat'], IL: ['il_vat'], IN: ['in_gst'], IS: ['is_vat'], IT: ['eu_vat'],
  JP: ['jp_cn', 'jp_rn', 'jp_trn'], KE: ['ke_pin'], KR: ['kr_brn'], KZ: ['kz_bin'], LI: ['li_uid'], LT: ['eu_vat'],
  LU: ['eu_vat'], LV: ['eu_vat'], MK: ['mk_vat'], MT: ['eu_vat'], MU: ['mu_tan'], MX: ['mx_rfc'],
  MY: ['my_frp', 'my_itn', 'my_sst'], NG: ['ng_tin'], NL: ['eu_vat'], NO: ['no_vat', 'no_voec'], NZ: ['nz_gst'],
  OM: ['om_vat'], PE: ['pe_ruc'], PH: ['ph_tin'], PL: ['eu_vat'], PT: ['eu_vat'], RO: ['ro_tin', 'eu_vat'], RS: ['rs_pib'],
  RU: ['ru_inn', 'ru_kpp'], SA: ['sa_vat'], SE: ['eu_vat'], SG: ['sg_gst', 'sg_uen'], SI: ['si_tin', 'eu_vat'],
  SK: ['eu_vat'], SV: ['sv_nit'], TH: ['th_vat'], TR: ['tr_tin'], TW: ['tw_vat'], UA: ['ua_vat'], US: ['us_ein'],
  UY: ['uy_ruc'], VE: ['ve_rif'], VN: ['vn_tin'], ZA: ['za_vat'],
};

/**
 * The tax ID `number` read as one of `country`'s formats, compacted (`91-1144442` → `["911144442", "us_ein"]`);
 * undefined when the country has no tax IDs or the number fits none of its formats.
 */
export function parseTaxId(number: string, country: string): TaxId | undefined {
  // Greek VAT numbers are written EL…, though the country is GR.
  const compact = number.toUpperCase().replace(/[\s\-./,:]/g, '').replace(/^GR(?=\d)/, 'EL');
  for (const format of COUNTRY_FORMATS[country] ?? []) {
    const { pattern, strip } = FORMATS[format];
    const value = strip ? compact.replace(strip, '') : compact;
    if (pattern.test(value)) return [value, format];
  }
  return undefined;
}
