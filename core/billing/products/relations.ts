import type { Knex } from 'knex';
import { findBenefits } from '../benefits/repository.js';
import type { Benefit } from '../benefits/schema.js';
import { findCustomField } from '../custom-fields/repository.js';
import { findFile, findUsableFileIds } from '../files/repository.js';
import type { FileRecord } from '../files/schema.js';
import { linksOf, pricesOf } from './repository.js';
import { duplicateIssues, issue, type Issue } from './issues.js';
import type { AttachedCustomField, Product, ProductLinks, StoredProduct } from './schema.js';

type Executor = Knex | Knex.Transaction;

const defined = <T>(value: T | undefined): value is T => value !== undefined;

/**
 * Products as the API shows them: their current prices, and the benefits, media and custom fields they
 * link to, each in its order. What was deleted since it was attached is left out.
 */
export async function withRelations(db: Executor, products: readonly StoredProduct[]): Promise<Product[]> {
  const ids = products.map((product) => product.id);
  const [prices, links] = await Promise.all([pricesOf(db, ids), linksOf(db, ids)]);
  const benefits = await benefitsByOrganization(db, products, links);
  return Promise.all(
    products.map(async (product) => {
      const { benefitIds, mediaIds, customFields } = links.get(product.id)!;
      const scope = [product.organizationId];
      const medias = await Promise.all(mediaIds.map((id) => findFile(db, id, scope)));
      const fields = await Promise.all(
        customFields.map(async (attached, order): Promise<AttachedCustomField | undefined> => {
          const customField = await findCustomField(db, attached.customFieldId, scope);
          return customField && { customField, order, required: attached.required };
        }),
      );
      return {
        ...product,
        prices: prices.get(product.id) ?? [],
        benefits: benefitIds.map((id) => benefits.get(id)).filter(defined),
        medias: medias.filter((file): file is FileRecord => file !== undefined),
        attachedCustomFields: fields.filter(defined),
      };
    }),
  );
}

/** Every linked benefit, fetched once per organization. */
async function benefitsByOrganization(db: Executor, products: readonly StoredProduct[], links: Map<string, ProductLinks>): Promise<Map<string, Benefit>> {
  const wanted = new Map<string, string[]>();
  for (const product of products) wanted.set(product.organizationId, [...(wanted.get(product.organizationId) ?? []), ...links.get(product.id)!.benefitIds]);
  const found = await Promise.all([...wanted].map(([organizationId, ids]) => (ids.length ? findBenefits(db, organizationId, ids) : [])));
  return new Map(found.flat().map((benefit) => [benefit.id, benefit]));
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
  const found = await Promise.all(ids.map((id) => findCustomField(db, id, [organizationId])));
  return [
    ...duplicateIssues('attached_custom_fields', ids),
    ...found.flatMap((field, index) => (field ? [] : [issue(['attached_custom_fields', index], 'Custom field does not exist.')])),
  ];
}
