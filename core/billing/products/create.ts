import { newId } from '../../db/columns.js';
import { issue, type Issue } from './issues.js';
import { METERS_UNAVAILABLE, metersForPrices, planPrices } from './prices.js';
import { customFieldIssues, mediaIssues } from './relations.js';
import { insertPrices, insertProduct, writeCustomFields, writeMedias } from './repository.js';
import type { Product, ProductCreate, StoredProduct } from './schema.js';
import { announce, defaultCurrencyOf, invalid, type ProductContext } from './service.js';

/**
 * Creates a product with its prices, media and custom fields, and announces it (product.created) in the
 * same transaction. Every problem is reported at once; a refused create writes nothing.
 */
export async function createProduct(context: ProductContext, organizationId: string, input: ProductCreate): Promise<Product> {
  return context.db.transaction(async (trx) => {
    const now = context.clock.now();
    const recurringInterval = input.recurring_interval ?? null;
    const product: StoredProduct = {
      id: newId(),
      organizationId,
      name: input.name,
      description: input.description ?? null,
      visibility: input.visibility,
      recurringInterval,
      recurringIntervalCount: recurringInterval === null ? null : (input.recurring_interval_count ?? 1),
      trialInterval: input.trial_interval ?? null,
      trialIntervalCount: input.trial_interval_count ?? null,
      meterInterval: null,
      meterIntervalCount: null,
      isArchived: false,
      metadata: input.metadata ?? {},
      createdAt: now,
      modifiedAt: null,
    };
    const prices = planPrices({
      items: input.prices,
      current: [],
      product,
      nextPosition: 0,
      defaultCurrency: await defaultCurrencyOf(trx, organizationId),
      now,
      meters: await metersForPrices(trx, organizationId, input.prices),
    });
    const medias = input.medias ?? [];
    const customFields = input.attached_custom_fields.map((field) => ({ customFieldId: field.custom_field_id, required: field.required }));
    const issues: Issue[] = [
      ...prices.issues,
      // A meter cycle separate from billing only makes sense with metered prices, which need meters.
      ...(input.meter_interval != null || input.meter_interval_count != null ? [issue(['meter_interval'], METERS_UNAVAILABLE)] : []),
      ...(await mediaIssues(trx, organizationId, medias)),
      ...(await customFieldIssues(trx, organizationId, customFields)),
    ];
    if (issues.length) throw invalid(issues);

    await insertProduct(trx, product);
    await insertPrices(trx, prices.created);
    await writeMedias(trx, product.id, medias);
    await writeCustomFields(trx, product.id, customFields);
    return announce(trx, context, product, 'product.created');
  });
}
