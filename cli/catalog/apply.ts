import { createHash } from 'node:crypto';
import { CliError, isCliError } from '../errors.js';
import type { ApiObject, Kind } from './model.js';
import { canonical, matchPrices, type Plan, type Step } from './plan.js';
import { serverPrice } from './model.js';

/** How `apply` reaches the API: one write, sent with the step's idempotency key, or a read (GET, no key). */
export type Send = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body: unknown, idempotencyKey?: string) => Promise<ApiObject | null>;

export interface AppliedStep {
  step: Step;
  id: string;
}

/** A step failed: what was done before it is in `done`. */
export class ApplyFailure extends Error {
  constructor(
    readonly done: AppliedStep[],
    readonly failed: Step,
    readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

const PATHS: Record<Kind, string> = {
  meter: '/v1/meters',
  custom_field: '/v1/custom-fields',
  benefit: '/v1/benefits',
  product: '/v1/products',
  discount: '/v1/discounts',
  webhook: '/v1/webhooks/endpoints',
  tax_rate: '/v1/tax-rates',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Carries out a plan in order. Every write carries an idempotency key derived from the organization, the
 * step and its body, so an apply that stopped part-way (a timeout, a crash) and is run again replays the
 * writes that had happened instead of repeating them, then finishes the rest.
 */
export async function applyPlan(plan: Plan, keys: { kind: Kind; key: string; object_id: string }[], send: Send, onStep: (done: AppliedStep) => void = () => {}): Promise<AppliedStep[]> {
  const ids = new Map(keys.map((binding) => [`${binding.kind}:${binding.key}`, binding.object_id]));
  const idOf = (kind: Kind, key: string) => {
    const id = ids.get(`${kind}:${key}`) ?? (UUID.test(key) ? key : undefined);
    if (!id) throw new Error(`No ${kind} with the key ${key}`);
    return id;
  };
  const keyOf = (kind: Kind, id: string) => [...ids].find(([name, value]) => value === id && name.startsWith(`${kind}:`))?.[0].slice(kind.length + 1) ?? id;
  const write = (step: Step, label: string, method: 'POST' | 'PATCH' | 'DELETE', path: string, body: unknown) =>
    send(method, path, body, idempotencyKey(plan.organizationId, step, label, body));
  const read = (path: string) => send('GET', path, undefined);
  const done: AppliedStep[] = [];
  for (const step of plan.steps) {
    try {
      const id = await runStep(step, { organizationId: plan.organizationId, idOf, keyOf, write, read });
      if (step.kind !== 'organization' && step.action !== 'archive' && step.action !== 'migrate') {
        ids.set(`${step.kind}:${step.key}`, id);
        await write(step, 'bind', 'POST', '/v1/catalog/keys', { organization_id: plan.organizationId, kind: step.kind, key: step.key, object_id: id });
      }
      done.push({ step, id });
      onStep({ step, id });
    } catch (error) {
      throw new ApplyFailure(done, step, error);
    }
  }
  return done;
}

/** `till-apply-` and a hash of what makes the write this write: the same step with the same body has the same key. */
export function idempotencyKey(organizationId: string, step: Step, label: string, body: unknown): string {
  const hash = createHash('sha256').update(canonical([organizationId, step.kind, step.key, step.action, label, body])).digest('hex');
  return `till-apply-${hash.slice(0, 40)}`;
}

interface StepContext {
  organizationId: string;
  idOf(kind: Kind, key: string): string;
  /** An id read back as its key (a current price's meter), or the id itself. */
  keyOf(kind: Kind, id: string): string;
  write(step: Step, label: string, method: 'POST' | 'PATCH' | 'DELETE', path: string, body: unknown): Promise<ApiObject | null>;
  read(path: string): Promise<ApiObject | null>;
}

async function runStep(step: Step, context: StepContext): Promise<string> {
  const { write, organizationId } = context;
  if (step.kind === 'organization') {
    await write(step, 'update', 'PATCH', `/v1/organizations/${organizationId}`, Object.fromEntries(step.changes.map((change) => [change.field, change.to])));
    return organizationId;
  }
  const kind = step.kind;
  const base = PATHS[kind];
  if (step.action === 'archive') {
    const change = step.changes[0];
    await write(step, 'archive', 'PATCH', `${base}/${step.id}`, { [change.field === 'is_archived' ? 'is_archived' : change.field]: change.to });
    return step.id!;
  }
  if (step.action === 'migrate') {
    await migrateSubscriptions(step, context);
    return step.id!;
  }
  const fields = step.entry!.fields;
  const body = writeBody(kind, fields, context);
  // A file without a Discord token keeps the benefit's own: an update sends it back unchanged.
  if (kind === 'benefit' && fields.type === 'discord' && step.action === 'update') {
    const properties = body.properties as Record<string, unknown>;
    const currentToken = (step.current?.properties as Record<string, unknown> | undefined)?.guild_token;
    if (properties.guild_token === undefined && currentToken !== undefined) body.properties = { ...properties, guild_token: currentToken };
  }
  if (step.action === 'create' || step.action === 'replace') {
    if (step.action === 'replace') await write(step, 'delete', 'DELETE', `${base}/${step.id}`, undefined);
    // A replacement's creation is keyed as a creation: stopped after the old one went, the next apply plans a
    // create of the same body, whose key then replays the object already made instead of making a second.
    const created = await write({ ...step, action: 'create' }, 'create', 'POST', base, { ...body, organization_id: organizationId });
    const id = String(created?.id);
    await afterWrite(step, id, fields, context);
    return id;
  }
  const id = step.id!;
  const update: Record<string, unknown> = { ...body };
  if (kind === 'product') {
    // Prices are never edited: keep the unchanged ones by id, create the new ones; the rest are archived.
    const current = ((step.current?.prices as ApiObject[]) ?? []).filter((price) => !price.is_archived);
    const comparable = current.map((price) => ({ price, terms: serverPrice(price, { keyOf: context.keyOf }) }));
    const { kept, added } = matchPrices(
      comparable.map((item) => item.terms),
      fields.prices as unknown[],
    );
    update.prices = [...kept.map((item) => ({ id: String(comparable[item.index].price.id) })), ...added.map((price) => priceBody(price as Record<string, unknown>, context))];
    update.is_archived = false;
  }
  if (kind === 'meter') update.is_archived = false;
  await write(step, 'update', 'PATCH', `${base}/${id}`, update);
  await afterWrite(step, id, fields, context);
  return id;
}

/**
 * Moves each subscription of the step onto the product's current fixed price in its currency, read now (the
 * product's update before it may have just made that price). The price is in the body, so its idempotency key
 * is that of this move only; a subscription already on the price is answered unchanged.
 */
async function migrateSubscriptions(step: Step, context: StepContext) {
  const product = await context.read(`/v1/products/${step.id}`);
  const prices = ((product?.prices as ApiObject[]) ?? []).filter((price) => !price.is_archived && price.amount_type === 'fixed');
  const behavior = step.entry?.migrate?.prorationBehavior ?? null;
  // One subscription that cannot move (a declined charge, a payment owed) does not hold the others back.
  const failures: string[] = [];
  let firstError: unknown;
  for (const subscription of step.subscriptions ?? []) {
    try {
      const price = prices.find((candidate) => candidate.price_currency === subscription.currency);
      if (!price) throw new Error(`product ${step.key} has no fixed price in ${subscription.currency}`);
      const body = { subscription_id: subscription.id, price_id: String(price.id), ...(behavior ? { proration_behavior: behavior } : {}) };
      await context.write(step, 'migrate', 'POST', '/v1/catalog/price-migrations', body);
    } catch (error) {
      firstError ??= error;
      failures.push(`${subscription.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (failures.length > 0) {
    const moved = (step.subscriptions?.length ?? 0) - failures.length;
    const message = `${moved} subscription${moved === 1 ? '' : 's'} moved, ${failures.length} not: ${failures.join('; ')}`;
    // The exit code of the first refusal (a decline, a conflict…), the message of them all.
    throw isCliError(firstError) ? new CliError(firstError.code, message, firstError.exitCode, firstError.hint) : new Error(message);
  }
}

/** What follows the main write: a product's benefits (their own endpoint), a webhook created disabled. */
async function afterWrite(step: Step, id: string, fields: Record<string, unknown>, context: StepContext) {
  if (step.kind === 'product') {
    const benefits = (fields.benefits as string[]).map((key) => context.idOf('benefit', key));
    const changed = step.action === 'create' ? benefits.length > 0 : step.changes.some((change) => change.field === 'benefits');
    if (changed) await context.write(step, 'benefits', 'POST', `/v1/products/${id}/benefits`, { benefits });
  }
  if (step.kind === 'webhook' && step.action === 'create' && fields.enabled === false) {
    await context.write(step, 'disable', 'PATCH', `/v1/webhooks/endpoints/${id}`, { enabled: false });
  }
}

function priceBody(price: Record<string, unknown>, context: StepContext): Record<string, unknown> {
  if (price.amount_type !== 'metered_unit') return price;
  const { meter, ...rest } = price;
  return { ...rest, meter_id: context.idOf('meter', String(meter)) };
}

/** The create or update body of an entry: the file's fields with keys turned into ids. */
function writeBody(kind: Kind, fields: Record<string, unknown>, context: StepContext): Record<string, unknown> {
  switch (kind) {
    case 'benefit': {
      const properties = { ...(fields.properties as Record<string, unknown>) };
      if (fields.type === 'meter_credit') {
        properties.meter_id = context.idOf('meter', String(properties.meter));
        delete properties.meter;
      }
      return { ...fields, properties };
    }
    case 'product': {
      const { benefits: _benefits, custom_fields: customFields, prices, ...rest } = fields;
      void _benefits;
      return {
        ...rest,
        prices: (prices as Record<string, unknown>[]).map((price) => priceBody(price, context)),
        attached_custom_fields: (customFields as { field: string; required: boolean }[]).map((attached) => ({ custom_field_id: context.idOf('custom_field', attached.field), required: attached.required })),
      };
    }
    case 'discount': {
      const { products, ...rest } = fields;
      const body: Record<string, unknown> = { ...rest, products: (products as string[]).map((key) => context.idOf('product', key)) };
      if (body.duration !== 'repeating') delete body.duration_in_months;
      return body;
    }
    default:
      return { ...fields };
  }
}
