import type { Knex } from 'knex';
import { fromDbBool, fromDbInt, fromDbJson, fromDbTime, fromDbTimeOrNull, toDbJson, toDbTime, toDbTimeOrNull } from '../../db/columns.js';
import { dialectOf } from '../../db/database.js';
import type { Metadata } from '../shared/metadata.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import type { Interval, Price, PriceTerms, ProductLinks, SeatTiers, StoredProduct, TaxBehavior, Visibility } from './schema.js';
import { escapeLike, preparedRowsOnPostgres, whereMetadata } from '../../db/sql.js';
import { read } from '../../db/read.js';
import { compiledRead } from '../../db/compiled-read.js';
import { toBenefit } from '../benefits/repository.js';
import type { Benefit } from '../benefits/schema.js';
import { toCustomField } from '../custom-fields/repository.js';
import type { CustomField } from '../custom-fields/schema.js';
import { toFile } from '../files/repository.js';
import type { FileRecord } from '../files/schema.js';

type Executor = Knex | Knex.Transaction;
const PRODUCTS = 'products';
const PRICES = 'product_prices';
const BENEFITS = 'product_benefits';
const MEDIAS = 'product_medias';
const CUSTOM_FIELDS = 'product_custom_fields';

const intOrNull = (value: unknown) => (value === null || value === undefined ? null : fromDbInt(value));

function toProduct(row: Record<string, unknown>): StoredProduct {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    description: (row.description as string | null) ?? null,
    visibility: row.visibility as Visibility,
    recurringInterval: (row.recurring_interval as Interval | null) ?? null,
    recurringIntervalCount: intOrNull(row.recurring_interval_count),
    trialInterval: (row.trial_interval as Interval | null) ?? null,
    trialIntervalCount: intOrNull(row.trial_interval_count),
    meterInterval: (row.meter_interval as Interval | null) ?? null,
    meterIntervalCount: intOrNull(row.meter_interval_count),
    isArchived: fromDbBool(row.is_archived),
    metadata: fromDbJson<Metadata>(row.metadata),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

/** The columns an update may change (created and updated alike). */
function productColumns(product: StoredProduct) {
  return {
    name: product.name,
    description: product.description,
    visibility: product.visibility,
    recurring_interval: product.recurringInterval,
    recurring_interval_count: product.recurringIntervalCount,
    trial_interval: product.trialInterval,
    trial_interval_count: product.trialIntervalCount,
    meter_interval: product.meterInterval,
    meter_interval_count: product.meterIntervalCount,
    is_archived: product.isArchived,
    metadata: toDbJson(product.metadata),
    modified_at: toDbTimeOrNull(product.modifiedAt),
  };
}

function toTerms(row: Record<string, unknown>): PriceTerms {
  switch (row.amount_type) {
    case 'fixed':
      return { amountType: 'fixed', priceAmount: fromDbInt(row.price_amount) };
    case 'custom':
      return { amountType: 'custom', minimumAmount: fromDbInt(row.minimum_amount), maximumAmount: intOrNull(row.maximum_amount), presetAmount: intOrNull(row.preset_amount) };
    case 'seat_based':
      return { amountType: 'seat_based', seatTiers: fromDbJson<SeatTiers>(row.seat_tiers) };
    case 'metered_unit':
      return {
        amountType: 'metered_unit',
        unitAmount: String(row.unit_amount),
        capAmount: intOrNull(row.cap_amount),
        meterId: String(row.meter_id),
        meter: {
          id: String(row.meter_id),
          name: String(row.meter_name),
          unit: String(row.meter_unit),
          customLabel: (row.meter_custom_label as string | null) ?? null,
          customMultiplier: row.meter_custom_multiplier === null || row.meter_custom_multiplier === undefined ? null : Number(row.meter_custom_multiplier),
        },
      };
    default:
      throw new TypeError(`unknown price amount type: ${String(row.amount_type)}`);
  }
}

function toPrice(row: Record<string, unknown>): Price {
  return {
    ...toTerms(row),
    id: String(row.id),
    productId: String(row.product_id),
    source: row.source as Price['source'],
    priceCurrency: String(row.price_currency),
    taxBehavior: (row.tax_behavior as TaxBehavior | null) ?? null,
    isArchived: fromDbBool(row.is_archived),
    legacyRecurringInterval: (row.legacy_recurring_interval as Interval | null) ?? null,
    position: fromDbInt(row.position),
    createdAt: fromDbTime(row.created_at),
    modifiedAt: fromDbTimeOrNull(row.modified_at),
  };
}

function priceRow(price: Price) {
  const terms = price.amountType === 'fixed' ? { price_amount: price.priceAmount } : {};
  const custom = price.amountType === 'custom' ? { minimum_amount: price.minimumAmount, maximum_amount: price.maximumAmount, preset_amount: price.presetAmount } : {};
  const seats = price.amountType === 'seat_based' ? { seat_tiers: toDbJson(price.seatTiers) } : {};
  const metered = price.amountType === 'metered_unit' ? { unit_amount: price.unitAmount, cap_amount: price.capAmount, meter_id: price.meterId } : {};
  return {
    id: price.id,
    product_id: price.productId,
    amount_type: price.amountType,
    source: price.source,
    price_currency: price.priceCurrency,
    tax_behavior: price.taxBehavior,
    ...terms,
    ...custom,
    ...seats,
    ...metered,
    legacy_recurring_interval: price.legacyRecurringInterval,
    is_archived: price.isArchived,
    position: price.position,
    created_at: toDbTime(price.createdAt),
    modified_at: toDbTimeOrNull(price.modifiedAt),
  };
}

export async function insertProduct(trx: Executor, product: StoredProduct): Promise<void> {
  await trx(PRODUCTS).insert({ ...productColumns(product), id: product.id, organization_id: product.organizationId, created_at: toDbTime(product.createdAt) });
}

export async function saveProduct(trx: Executor, product: StoredProduct): Promise<void> {
  await trx(PRODUCTS).where({ id: product.id }).update(productColumns(product));
}

/**
 * A product of one of the organizations. `forUpdate` locks its row on PostgreSQL until the transaction
 * ends, so concurrent updates of one product (prices above all) apply one after the other. `forShare` holds it
 * while something that will refer to it is written: a deletion (which locks it for update) waits, then sees the
 * new use; a deletion first, and the product is not found.
 */
export async function findProduct(db: Executor, id: string, organizationIds: Iterable<string>, options: { forUpdate?: boolean; forShare?: boolean } = {}): Promise<StoredProduct | undefined> {
  let row: Record<string, unknown> | undefined;
  if (!options.forUpdate && !options.forShare) row = await productById(db, id, [...organizationIds]);
  else {
    const query = db(PRODUCTS).where({ id }).whereIn('organization_id', [...organizationIds]).first();
    if (options.forUpdate && dialectOf(db as Knex) === 'postgres') query.forUpdate();
    else if (options.forShare && dialectOf(db as Knex) === 'postgres') query.forShare();
    row = await read<Record<string, unknown> | undefined>(query);
  }
  return row ? toProduct(row) : undefined;
}

const productById = compiledRead<Record<string, unknown> | undefined, [string, string[]]>((db, id, organizationIds) =>
  db(PRODUCTS).where({ id }).whereIn('organization_id', organizationIds).first(),
);

/** Products by id, of any organization (callers check ownership), in one query. */
export async function findProductsByIds(db: Executor, ids: readonly string[], options: { forShare?: boolean } = {}): Promise<StoredProduct[]> {
  if (ids.length === 0) return [];
  const query = db(PRODUCTS).whereIn('id', [...new Set(ids)]);
  // Whatever will refer to the products (a checkout being opened, a discount, a checkout link) holds them
  // (PostgreSQL): a deletion waits for it, then sees the new use.
  if (options.forShare && dialectOf(db as Knex) === 'postgres') query.forShare();
  return (await query).map(toProduct);
}

export async function insertPrices(trx: Executor, prices: readonly Price[]): Promise<void> {
  if (prices.length) await trx(PRICES).insert(prices.map(priceRow));
}

/** Archives prices of a product (never edits their terms: orders keep pointing at them). */
export async function archivePrices(trx: Executor, productId: string, priceIds: readonly string[], at: Date): Promise<void> {
  if (priceIds.length) await trx(PRICES).where({ product_id: productId }).whereIn('id', priceIds).update({ is_archived: true, modified_at: toDbTime(at) });
}

/** A price query with the price's columns and, for a metered price, its meter's (the price shows the meter). */
const withMeter = (query: Knex.QueryBuilder) =>
  query
    .leftJoin('meters', 'meters.id', `${PRICES}.meter_id`)
    .select(`${PRICES}.*`, 'meters.name as meter_name', 'meters.unit as meter_unit', 'meters.custom_label as meter_custom_label', 'meters.custom_multiplier as meter_custom_multiplier');

/** The prices of each product, in their order; archived ones only when asked for. */
export async function pricesOf(db: Executor, productIds: readonly string[], options: { archived?: boolean } = {}): Promise<Map<string, Price[]>> {
  const byProduct = new Map<string, Price[]>(productIds.map((id) => [id, []]));
  if (productIds.length === 0) return byProduct;
  for (const row of await (options.archived ? pricesWithArchived : currentPrices)(db, productIds)) byProduct.get(row.product_id)?.push(toPrice(row));
  return byProduct;
}

const pricesOfProducts = (db: Executor, productIds: readonly string[], archived: boolean) => {
  const query = withMeter(db(PRICES).whereIn(`${PRICES}.product_id`, productIds));
  if (!archived) query.where(`${PRICES}.is_archived`, false);
  return query.orderBy([`${PRICES}.product_id`, `${PRICES}.position`]);
};
const currentPrices = compiledRead<Record<string, any>[], [readonly string[]]>((db, productIds) => pricesOfProducts(db, productIds, false));
const pricesWithArchived = compiledRead<Record<string, any>[], [readonly string[]]>((db, productIds) => pricesOfProducts(db, productIds, true));

/** A price by id, archived or not, with the organization of its product (what an order will look up). */
export async function findPrice(db: Executor, id: string): Promise<(Price & { organizationId: string }) | undefined> {
  const row = await withMeter(db(PRICES).join(PRODUCTS, `${PRODUCTS}.id`, `${PRICES}.product_id`).where(`${PRICES}.id`, id)).first(`${PRODUCTS}.organization_id`);
  return row ? { ...toPrice(row), organizationId: String(row.organization_id) } : undefined;
}

/** The benefit, media and custom-field ids each product links to, in order. */
export async function linksOf(db: Executor, productIds: readonly string[]): Promise<Map<string, ProductLinks>> {
  const byProduct = new Map<string, ProductLinks>(productIds.map((id) => [id, { benefitIds: [], mediaIds: [], customFields: [] }]));
  if (productIds.length === 0) return byProduct;
  for (const row of await linkRows(db, productIds)) {
    const link = byProduct.get(row.product_id);
    if (link) addLink(link, row);
  }
  return byProduct;
}

const linkRows = compiledRead<{ kind: string; product_id: string; ref: string; required: unknown }[], [readonly string[]]>((db, productIds) => {
  // The three link tables in one statement (one round trip on PostgreSQL instead of three), each row tagged with
  // its table; ordered by table, product and position as the three queries were. The custom fields come first so
  // that PostgreSQL types the union's `required` by their boolean column, not by the others' NULL.
  const links = (table: string, kind: 'b' | 'm' | 'f', ref: string) =>
    db(table)
      .whereIn('product_id', productIds)
      .select(db.raw(`'${kind}' as kind`), 'product_id', 'position', `${ref} as ref`, kind === 'f' ? 'required' : db.raw('null as required'));
  return links(CUSTOM_FIELDS, 'f', 'custom_field_id')
    .unionAll([links(BENEFITS, 'b', 'benefit_id'), links(MEDIAS, 'm', 'file_id')])
    .orderBy(['kind', 'product_id', 'position']);
});

/** A link row (kind b, m or f; its ref; `required` for a custom field) added to the product's links, in order. */
function addLink(link: ProductLinks, row: { kind: string; ref: string; required: unknown }) {
  if (row.kind === 'b') link.benefitIds.push(row.ref);
  else if (row.kind === 'm') link.mediaIds.push(row.ref);
  else link.customFields.push({ customFieldId: row.ref, required: fromDbBool(row.required) });
}

/** A product and what withRelations reads for it, as rows: its current prices, links, and the linked records. */
export interface ProductRows {
  product: StoredProduct;
  prices: Price[];
  links: ProductLinks;
  /** Live benefits of the product's organization it links to. */
  benefits: Benefit[];
  /** Live files it links to, of any organization (withRelations keeps its own organization's). */
  files: FileRecord[];
  /** Live custom fields it links to, of any organization (same). */
  customFields: CustomField[];
}

/** `(select …)` rows as one JSON array (an empty one for none), optionally in an order. */
const jsonRows = (select: string, orderBy = '') => `coalesce((select json_agg(r${orderBy && ` order by ${orderBy}`}) from (${select}) r), '[]')`;

/**
 * On PostgreSQL, a product of one of the organizations with every relation withRelations reads (pricesOf, linksOf,
 * the benefits, files and custom fields linked), in one statement instead of five or six: each query there is a
 * round trip, and its socket writes were most of a read's CPU (docs/performance.md, "Reads"). The same rows, as JSON
 * (the row mappers read timestamps as ISO text, bigints as numbers, jsonb as objects alike). A named (prepared)
 * statement, see preparedOnPostgres.
 */
export async function findProductRowsOnPostgres(db: Executor, id: string, organizationIds: Iterable<string>): Promise<ProductRows | undefined> {
  const organizations = [...organizationIds];
  if (organizations.length === 0) return undefined;
  const linked = (table: string, column: string) => `select ${column} from ${table} where product_id = p.id`;
  const [row] = await preparedRowsOnPostgres(
    db,
    `till_product_rows_${organizations.length}`,
    `select to_json(p) as product_row,
      ${jsonRows(`select pp.*, m.name as meter_name, m.unit as meter_unit, m.custom_label as meter_custom_label, m.custom_multiplier as meter_custom_multiplier
        from ${PRICES} pp left join meters m on m.id = pp.meter_id where pp.product_id = p.id and pp.is_archived = false`, 'r.position')} as price_rows,
      ${jsonRows(`select 'f' as kind, position, custom_field_id as ref, required from ${CUSTOM_FIELDS} where product_id = p.id
        union all select 'b', position, benefit_id, null from ${BENEFITS} where product_id = p.id
        union all select 'm', position, file_id, null from ${MEDIAS} where product_id = p.id`, 'r.kind, r.position')} as link_rows,
      ${jsonRows(`select * from benefits where organization_id = p.organization_id and deleted_at is null and id in (${linked(BENEFITS, 'benefit_id')})`)} as benefit_rows,
      ${jsonRows(`select * from files where deleted_at is null and id in (${linked(MEDIAS, 'file_id')})`)} as file_rows,
      ${jsonRows(`select * from custom_fields where deleted_at is null and id in (${linked(CUSTOM_FIELDS, 'custom_field_id')})`)} as custom_field_rows
    from ${PRODUCTS} p where p.id = ? and p.organization_id in (${organizations.map(() => '?').join(', ')})`,
    [id, ...organizations],
  );
  if (!row) return undefined;
  const links: ProductLinks = { benefitIds: [], mediaIds: [], customFields: [] };
  for (const link of row.link_rows) addLink(links, link);
  return {
    product: toProduct(row.product_row),
    prices: row.price_rows.map(toPrice),
    links,
    benefits: row.benefit_rows.map(toBenefit),
    files: row.file_rows.map(toFile),
    customFields: row.custom_field_rows.map(toCustomField),
  };
}

/** Replaces a product's benefits with `benefitIds`, in that order. */
export async function writeBenefits(trx: Executor, productId: string, benefitIds: readonly string[]): Promise<void> {
  await trx(BENEFITS).where({ product_id: productId }).delete();
  if (benefitIds.length) await trx(BENEFITS).insert(benefitIds.map((benefitId, position) => ({ product_id: productId, benefit_id: benefitId, position })));
}

/** Replaces a product's media files with `fileIds`, in that order. */
export async function writeMedias(trx: Executor, productId: string, fileIds: readonly string[]): Promise<void> {
  await trx(MEDIAS).where({ product_id: productId }).delete();
  if (fileIds.length) await trx(MEDIAS).insert(fileIds.map((fileId, position) => ({ product_id: productId, file_id: fileId, position })));
}

/** Replaces a product's custom fields, in order (the order is the checkout form's). */
export async function writeCustomFields(trx: Executor, productId: string, fields: ProductLinks['customFields']): Promise<void> {
  await trx(CUSTOM_FIELDS).where({ product_id: productId }).delete();
  if (fields.length) {
    await trx(CUSTOM_FIELDS).insert(fields.map((field, position) => ({ product_id: productId, custom_field_id: field.customFieldId, required: field.required, position })));
  }
}

export interface ProductFilter {
  organizationIds: readonly string[];
  ids?: readonly string[];
  /** Part of the name, case-insensitive. */
  query?: string;
  isArchived?: boolean;
  isRecurring?: boolean;
  benefitIds?: readonly string[];
  visibilities?: readonly Visibility[];
  /** `metadata[key]=value`: values of one key OR'ed, keys AND'ed, compared as strings. */
  metadata: Record<string, string[]>;
}


/** Sorting by price reads the product's first current price, as Polar does: custom before fixed, then its amount. */
const FIRST_PRICE = (expression: string) =>
  `(select ${expression} from ${PRICES} as fp where fp.product_id = ${PRODUCTS}.id and fp.is_archived = ? order by fp.position limit 1)`;
const PRICE_SORTS: Record<string, string> = {
  price_amount_type: FIRST_PRICE(`case fp.amount_type when 'custom' then 1 when 'fixed' then 2 end`),
  price_amount: FIRST_PRICE(`case fp.amount_type when 'custom' then coalesce(fp.minimum_amount, -1) when 'fixed' then fp.price_amount end`),
};
const SORT_COLUMNS: Record<string, string> = { created_at: `${PRODUCTS}.created_at`, name: `${PRODUCTS}.name` };

export async function listProducts(db: Executor, filter: ProductFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<StoredProduct>> {
  const pg = dialectOf(db as Knex) === 'postgres';
  const scoped = () => {
    const query = db(PRODUCTS).whereIn(`${PRODUCTS}.organization_id`, filter.organizationIds);
    if (filter.ids) query.whereIn(`${PRODUCTS}.id`, filter.ids);
    if (filter.query) query.whereRaw(`lower(${PRODUCTS}.name) like ? escape '\\'`, [`%${escapeLike(filter.query.toLowerCase())}%`]);
    if (filter.isArchived !== undefined) query.where(`${PRODUCTS}.is_archived`, filter.isArchived);
    if (filter.isRecurring === true) query.whereNotNull(`${PRODUCTS}.recurring_interval`);
    if (filter.isRecurring === false) query.whereNull(`${PRODUCTS}.recurring_interval`);
    if (filter.visibilities) query.whereIn(`${PRODUCTS}.visibility`, filter.visibilities);
    if (filter.benefitIds) {
      const benefitIds = filter.benefitIds;
      query.whereExists((q) => q.select(db.raw('1')).from(BENEFITS).whereRaw(`${BENEFITS}.product_id = ${PRODUCTS}.id`).whereIn(`${BENEFITS}.benefit_id`, benefitIds));
    }
    whereMetadata(query, `${PRODUCTS}.metadata`, pg, filter.metadata);
    return query;
  };
  const [{ count }] = await scoped().count<{ count: number | string }[]>({ count: '*' });
  const query = scoped().select(`${PRODUCTS}.*`);
  for (const { column, order } of sorting) {
    if (SORT_COLUMNS[column]) query.orderBy(SORT_COLUMNS[column], order);
    // PostgreSQL's default null placement, written out so SQLite sorts products without a price the same way.
    else if (PRICE_SORTS[column]) query.orderByRaw(`${PRICE_SORTS[column]} ${order} ${order === 'asc' ? 'nulls last' : 'nulls first'}`, [false]);
  }
  const rows = await query.orderBy(`${PRODUCTS}.id`).limit(page.limit).offset(offsetOf(page));
  return { items: rows.map(toProduct), totalCount: Number(count) };
}

/** The position after every price the product ever had (archived ones included). */
export async function nextPricePosition(db: Executor, productId: string): Promise<number> {
  const [{ last }] = await db(PRICES).where({ product_id: productId }).max<{ last: number | string | null }[]>({ last: 'position' });
  return last === null ? 0 : fromDbInt(last) + 1;
}
