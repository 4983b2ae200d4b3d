import type { Knex } from 'knex';
import { findBenefits } from '../benefits/repository.js';
import type { Benefit } from '../benefits/schema.js';
import { findCustomFieldsByIds } from '../custom-fields/repository.js';
import { findFilesByIds, findUsableFileIds } from '../files/repository.js';
import { findProduct, findProductRowsOnPostgres, linksOf, pricesOf } from './repository.js';
import { duplicateIssues, issue, type Issue } from './issues.js';
import type { AttachedCustomField, Price, Product, ProductLinks, StoredProduct } from './schema.js';
import type { CustomField } from '../custom-fields/schema.js';
import type { FileRecord } from '../files/schema.js';
import { dialectOf } from '../../db/database.js';

type Executor = Knex | Knex.Transaction;

const defined = <T>(value: T | undefined): value is T => value !== undefined;

/**
 * Products as the API shows them: their current prices, and the benefits, media and custom fields they
 * link to, each in its order. What was deleted since it was attached is left out.
 */
export async function withRelations(db: Executor, products: readonly StoredProduct[]): Promise<Product[]> {
  const ids = products.map((product) => product.id);
  // One query per relation, one after the other: a transaction's connection runs one query at a time.
  const prices = await pricesOf(db, ids);
  const links = await linksOf(db, ids);
  const benefits = await benefitsByOrganization(db, products, links);
  const all = [...links.values()];
  const files = await findFilesByIds(db, all.flatMap((link) => link.mediaIds));
  const customFields = await findCustomFieldsByIds(db, all.flatMap((link) => link.customFields.map((field) => field.customFieldId)));
  return products.map((product) => assemble(product, prices.get(product.id) ?? [], links.get(product.id)!, benefits, files, customFields));
}

/**
 * One product of the organizations as the API shows it (withRelations), or undefined. On PostgreSQL it is read in
 * one statement (findProductRowsOnPostgres); on SQLite, where a query costs no round trip, as withRelations reads it.
 */
export async function productWithRelations(db: Executor, id: string, organizationIds: Iterable<string>): Promise<Product | undefined> {
  if (dialectOf(db) === 'postgres') {
    const rows = await findProductRowsOnPostgres(db, id, organizationIds);
    return rows && assemble(rows.product, rows.prices, rows.links, byId(rows.benefits), byId(rows.files), byId(rows.customFields));
  }
  const product = await findProduct(db, id, organizationIds);
  return product && (await withRelations(db, [product]))[0];
}

const byId = <T extends { id: string }>(records: readonly T[]) => new Map(records.map((record) => [record.id, record]));

/** A product with its relations, from its prices, its links and the records linked (keyed by id). */
function assemble(
  product: StoredProduct,
  prices: Price[],
  { benefitIds, mediaIds, customFields: attached }: ProductLinks,
  benefits: ReadonlyMap<string, Benefit>,
  files: ReadonlyMap<string, FileRecord>,
  customFields: ReadonlyMap<string, CustomField>,
): Product {
  const ours = <T extends { organizationId: string }>(record: T | undefined) => (record?.organizationId === product.organizationId ? record : undefined);
  const fields = attached.map((field, order): AttachedCustomField | undefined => {
    const customField = ours(customFields.get(field.customFieldId));
    return customField && { customField, order, required: field.required };
  });
  return {
    ...product,
    prices,
    benefits: benefitIds.map((id) => benefits.get(id)).filter(defined),
    medias: mediaIds.map((id) => ours(files.get(id))).filter(defined),
    attachedCustomFields: fields.filter(defined),
  };
}

/** Every linked benefit, fetched once per organization. */
async function benefitsByOrganization(db: Executor, products: readonly StoredProduct[], links: Map<string, ProductLinks>): Promise<Map<string, Benefit>> {
  const wanted = new Map<string, string[]>();
  for (const product of products) wanted.set(product.organizationId, [...(wanted.get(product.organizationId) ?? []), ...links.get(product.id)!.benefitIds]);
  const byId = new Map<string, Benefit>();
  for (const [organizationId, benefitIds] of wanted) {
    if (benefitIds.length === 0) continue;
    for (const benefit of await findBenefits(db, organizationId, benefitIds)) byId.set(benefit.id, benefit);
  }
  return byId;
}

/** Checks that each id names an uploaded product media file of the organization. */
export async function mediaIssues(db: Executor, organizationId: string, ids: readonly string[]): Promise<Issue[]> {
  const usable = ids.length ? await findUsableFileIds(db, organizationId, ids, 'product_media') : new Set<string>();
  return [
    ...duplicateIssues('medias', ids),
    ...ids.flatMap((id, index) => (usable.has(id) ? [] : [issue(['medias', index], 'File does not exist or is not yet uploaded.')])),
  ];
}

/** Checks that each attached field is a live custom field of the organization. */
export async function customFieldIssues(db: Executor, organizationId: string, fields: ProductLinks['customFields']): Promise<Issue[]> {
  const ids = fields.map((field) => field.customFieldId);
  const found = await findCustomFieldsByIds(db, ids);
  return [
    ...duplicateIssues('attached_custom_fields', ids),
    ...ids.flatMap((id, index) =>
      found.get(id)?.organizationId === organizationId ? [] : [issue(['attached_custom_fields', index], 'Custom field does not exist.')],
    ),
  ];
}
