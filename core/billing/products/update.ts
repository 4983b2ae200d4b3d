import { issue, type Issue } from './issues.js';
import { metersForPrices, planPrices, type PricePlan } from './prices.js';
import { customFieldIssues, mediaIssues } from './relations.js';
import { archivePrices, insertPrices, nextPricePosition, pricesOf, saveProduct, writeCustomFields, writeMedias } from './repository.js';
import type { Price, Product, ProductUpdate, StoredProduct } from './schema.js';
import { announce, defaultCurrencyOf, invalid, writableProduct, type Access, type ProductContext } from './service.js';

type Trx = Parameters<typeof saveProduct>[0];

/** The interval a product bills at, which only a legacy product (legacy prices only) may still be given. */
function nextInterval(current: StoredProduct, prices: readonly Price[], input: ProductUpdate): { value: Pick<StoredProduct, 'recurringInterval' | 'recurringIntervalCount'>; issues: Issue[] } {
  const unchanged = { value: { recurringInterval: current.recurringInterval, recurringIntervalCount: current.recurringIntervalCount }, issues: [] };
  const changes =
    (input.recurring_interval !== undefined && input.recurring_interval !== current.recurringInterval) ||
    (input.recurring_interval_count !== undefined && input.recurring_interval_count !== current.recurringIntervalCount);
  if (!changes) return unchanged;
  const legacy = prices.length > 0 && prices.every((price) => price.legacyRecurringInterval !== null);
  if (!legacy) return { ...unchanged, issues: [issue(['recurring_interval'], 'Recurring interval cannot be changed.')] };
  const recurringInterval = input.recurring_interval === undefined ? current.recurringInterval : input.recurring_interval;
  return { value: { recurringInterval, recurringIntervalCount: recurringInterval === null ? null : (input.recurring_interval_count ?? current.recurringIntervalCount ?? 1) }, issues: [] };
}

/** The trial after the update: `null` for either field clears both. */
function nextTrial(current: StoredProduct, recurring: boolean, input: ProductUpdate): { value: Pick<StoredProduct, 'trialInterval' | 'trialIntervalCount'>; issues: Issue[] } {
  const clearing = input.trial_interval === null || input.trial_interval_count === null;
  const value = {
    trialInterval: clearing ? null : (input.trial_interval ?? current.trialInterval),
    trialIntervalCount: clearing ? null : (input.trial_interval_count ?? current.trialIntervalCount),
  };
  const issues: Issue[] = [];
  if (!recurring && value.trialInterval !== null) issues.push(issue(['trial_interval'], 'Trial configuration is only supported on recurring products.'));
  if ((value.trialInterval === null) !== (value.trialIntervalCount === null)) issues.push(issue(['trial_interval_count'], 'Give trial_interval and trial_interval_count together'));
  return { value, issues };
}

async function planUpdate(trx: Trx, current: StoredProduct, prices: Price[], input: ProductUpdate, now: Date): Promise<PricePlan | undefined> {
  if (!input.prices) return undefined;
  return planPrices({
    items: input.prices,
    current: prices,
    product: current,
    nextPosition: await nextPricePosition(trx, current.id),
    defaultCurrency: await defaultCurrencyOf(trx, current.organizationId),
    now,
    meters: await metersForPrices(trx, current.organizationId, input.prices),
  });
}

/**
 * Applies an update and announces it (product.updated) in the same transaction. New prices replace the
 * ones left out, which are archived; a product is archived, never deleted. A refused update changes nothing.
 */
export async function updateProduct(context: ProductContext, access: Access, id: string, input: ProductUpdate): Promise<Product> {
  return context.db.transaction(async (trx) => {
    const current = await writableProduct(trx, access, id);
    const now = context.clock.now();
    const prices = (await pricesOf(trx, [id])).get(id) ?? [];
    const interval = nextInterval(current, prices, input);
    const trial = nextTrial(current, interval.value.recurringInterval !== null, input);
    const plan = await planUpdate(trx, current, prices, input, now);
    const customFields = input.attached_custom_fields?.map((field) => ({ customFieldId: field.custom_field_id, required: field.required }));
    const issues: Issue[] = [
      ...interval.issues,
      ...trial.issues,
      ...(plan?.issues ?? []),
      ...(input.medias ? await mediaIssues(trx, current.organizationId, input.medias) : []),
      ...(customFields ? await customFieldIssues(trx, current.organizationId, customFields) : []),
    ];
    if (issues.length) throw invalid(issues);

    const next: StoredProduct = {
      ...current,
      ...interval.value,
      ...trial.value,
      name: input.name ?? current.name,
      description: input.description === undefined ? current.description : input.description,
      visibility: input.visibility ?? current.visibility,
      isArchived: input.is_archived ?? current.isArchived,
      metadata: input.metadata ?? current.metadata,
      modifiedAt: now,
    };
    await saveProduct(trx, next);
    if (plan) {
      await archivePrices(trx, id, plan.archived.map((price) => price.id), now);
      await insertPrices(trx, plan.created);
    }
    if (input.medias) await writeMedias(trx, id, input.medias);
    if (customFields) await writeCustomFields(trx, id, customFields);
    return announce(trx, context, next, 'product.updated');
  });
}
