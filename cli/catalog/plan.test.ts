import { describe, expect, it } from 'vitest';
import { applyPlan, ApplyFailure, idempotencyKey, type Send } from './apply.js';
import { CliError, EXIT } from '../errors.js';
import type { Entry } from './model.js';
import { buildPlan, type OrganizationState } from './plan.js';

const now = new Date('2026-11-25T12:00:00Z');
const productId = '11111111-1111-4111-8111-111111111111';

const proEntry = (amount: number): Entry => ({
  kind: 'product',
  key: 'pro',
  fields: {
    name: 'Pro',
    description: null,
    visibility: 'public',
    recurring_interval: 'month',
    recurring_interval_count: 1,
    trial_interval: null,
    trial_interval_count: null,
    prices: [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd', tax_behavior: null }],
    benefits: [],
    custom_fields: [],
    metadata: {},
  },
});

const state = (overrides: Partial<OrganizationState> = {}): OrganizationState => ({
  organization: { id: 'org', slug: 'acme', email: null },
  objects: {
    meter: [],
    custom_field: [],
    benefit: [],
    discount: [],
    webhook: [],
    tax_rate: [],
    product: [
      {
        id: productId,
        name: 'Pro',
        description: null,
        visibility: 'public',
        recurring_interval: 'month',
        recurring_interval_count: 1,
        trial_interval: null,
        trial_interval_count: null,
        is_archived: false,
        prices: [{ id: 'p1', amount_type: 'fixed', price_amount: 1500, price_currency: 'usd', tax_behavior: null, is_archived: false }],
        benefits: [],
        attached_custom_fields: [],
        metadata: {},
      },
    ],
  },
  keys: [{ kind: 'product', key: 'pro', object_id: productId }],
  ...overrides,
});

describe('buildPlan', () => {
  it('plans nothing when the organization matches the file', () => {
    expect(buildPlan([proEntry(1500)], undefined, state(), { prune: false, now }).steps).toEqual([]);
  });

  it('creates an object its key does not name yet, even when one of the same name exists (never guessed from names)', () => {
    const plan = buildPlan([proEntry(1500)], undefined, state({ keys: [] }), { prune: false, now });
    expect(plan.steps.map((step) => [step.action, step.key])).toEqual([['create', 'pro']]);
    expect(plan.untouched).toMatchObject([{ kind: 'product', id: productId, reason: 'not_in_file' }]);
  });

  it('plans a changed price as the old archived and a new one created', () => {
    const [step] = buildPlan([proEntry(1900)], undefined, state(), { prune: false, now }).steps;
    expect(step).toMatchObject({ action: 'update', kind: 'product', key: 'pro', id: productId });
    expect(step.changes).toEqual([
      { field: 'price', from: { amount_type: 'fixed', price_amount: 1500, price_currency: 'usd', tax_behavior: null }, to: null },
      { field: 'price', from: null, to: { amount_type: 'fixed', price_amount: 1900, price_currency: 'usd', tax_behavior: null } },
    ]);
  });

  it('archives what the file leaves out only with prune, and never benefits, which have no archive', () => {
    const withBenefit = state({ objects: { ...state().objects, benefit: [{ id: 'b1', type: 'custom', description: 'Support', properties: { note: null }, metadata: {} }] } });
    const pruned = buildPlan([], undefined, withBenefit, { prune: true, now });
    expect(pruned.steps).toEqual([{ action: 'archive', kind: 'product', key: 'pro', id: productId, changes: [{ field: 'is_archived', from: false, to: true }] }]);
    expect(pruned.untouched).toMatchObject([{ kind: 'benefit', id: 'b1', reason: 'not_archivable' }]);
  });

  it('compares only the organization settings the file names', () => {
    const plan = buildPlan([], { email: 'billing@example.com', subscription_settings: { proration_behavior: 'invoice' } }, state({ organization: { id: 'org', slug: 'acme', email: null, website: 'https://x.test', subscription_settings: { proration_behavior: 'prorate', allow_customer_updates: true } } }), { prune: false, now });
    expect(plan.steps[0].changes).toEqual([
      { field: 'email', from: null, to: 'billing@example.com' },
      { field: 'subscription_settings', from: { proration_behavior: 'prorate' }, to: { proration_behavior: 'invoice' } },
    ]);
  });

  it('moves subscriptions off a dropped price only when the file says migrate_subscriptions, and not those in a currency it has no fixed price in', () => {
    const onOld = { id: 's1', currency: 'usd', prices: [{ id: 'p1', amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] };
    const inEuro = { id: 's2', currency: 'eur', prices: [{ id: 'p9', amount_type: 'fixed', price_amount: 1400, price_currency: 'eur', is_archived: true }] };
    const withSubscriptions = state({ subscriptions: { [productId]: [onOld, inEuro] } });
    expect(buildPlan([proEntry(1900)], undefined, withSubscriptions, { prune: false, now }).steps.map((step) => step.action)).toEqual(['update']);

    const migrating = { ...proEntry(1900), migrate: { prorationBehavior: null } };
    const steps = buildPlan([migrating], undefined, withSubscriptions, { prune: false, now }).steps;
    expect(steps.map((step) => step.action)).toEqual(['update', 'migrate']);
    expect(steps[1]).toMatchObject({ kind: 'product', key: 'pro', id: productId, subscriptions: [{ id: 's1', currency: 'usd' }] });
    expect(steps[1].changes).toEqual([
      { field: 'subscription s1', from: { amount_type: 'fixed', price_amount: 1500, price_currency: 'usd', tax_behavior: null }, to: { amount_type: 'fixed', price_amount: 1900, price_currency: 'usd', tax_behavior: null } },
    ]);
    // Subscriptions on the price the file keeps stay where they are: nothing to do.
    expect(buildPlan([{ ...proEntry(1500), migrate: { prorationBehavior: null } }], undefined, withSubscriptions, { prune: false, now }).steps).toEqual([]);
  });

  it('keys the creation of a replaced tax rate as a creation, so an apply stopped after the deletion replays it next time', async () => {
    const rateId = '22222222-2222-4222-8222-222222222222';
    const entry: Entry = { kind: 'tax_rate', key: 'de', fields: { country: 'DE', state: null, basis_points: 1900 } };
    const withRate = (rates: Record<string, unknown>[], keys: OrganizationState['keys']) => state({ objects: { ...state().objects, product: [], tax_rate: rates }, keys });
    const replace = buildPlan([entry], undefined, withRate([{ id: rateId, country: 'DE', state: null, basis_points: 1600 }], [{ kind: 'tax_rate', key: 'de', object_id: rateId }]), { prune: false, now });
    // The old rate is gone and the key names nothing: the next plan is a create.
    const create = buildPlan([entry], undefined, withRate([], [{ kind: 'tax_rate', key: 'de', object_id: rateId }]), { prune: false, now });
    expect([replace.steps[0].action, create.steps[0].action]).toEqual(['replace', 'create']);
    const postKeys = async (plan: typeof replace) => {
      const keys: string[] = [];
      const send: Send = async (method, path, _body, key) => {
        if (method === 'POST' && path === '/v1/tax-rates') keys.push(key!);
        return { id: 'new-rate' };
      };
      await applyPlan(plan, plan === replace ? [{ kind: 'tax_rate', key: 'de', object_id: rateId }] : [], send);
      return keys;
    };
    expect(await postKeys(replace)).toEqual(await postKeys(create));
  });

  it('moves every subscription of a migration it can, then stops on the ones refused, naming them with the first refusal’s exit code', async () => {
    const subscriptions = ['s1', 's2', 's3'].map((id) => ({ id, currency: 'usd', prices: [{ id: 'p0', amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' }] }));
    const plan = buildPlan([{ ...proEntry(1500), migrate: { prorationBehavior: 'invoice' } }], undefined, state({ subscriptions: { [productId]: subscriptions } }), { prune: false, now });
    expect(plan.steps.map((step) => step.action)).toEqual(['migrate']);
    const tried: unknown[] = [];
    const send: Send = async (method, path, body) => {
      if (method === 'GET') return { id: productId, prices: [{ id: 'p1', amount_type: 'fixed', price_amount: 1500, price_currency: 'usd', is_archived: false }] };
      tried.push(body);
      if ((body as { subscription_id: string }).subscription_id === 's2') throw new CliError('SUBSCRIPTION_PAYMENT_FAILED', 'The change was not made: declined', EXIT.error);
      return {};
    };
    const failure = await applyPlan(plan, state().keys, send).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplyFailure);
    expect(tried).toEqual(['s1', 's2', 's3'].map((id) => ({ subscription_id: id, price_id: 'p1', proration_behavior: 'invoice' })));
    const cause = (failure as ApplyFailure).cause as CliError;
    expect(cause).toMatchObject({ code: 'SUBSCRIPTION_PAYMENT_FAILED', exitCode: EXIT.error });
    expect(cause.message).toBe('2 subscriptions moved, 1 not: s2: The change was not made: declined');
  });

  it('derives the same idempotency key for the same step and body, another for another body', () => {
    const [step] = buildPlan([proEntry(1500)], undefined, state({ keys: [] }), { prune: false, now }).steps;
    expect(idempotencyKey('org', step, 'create', { a: 1, b: 2 })).toBe(idempotencyKey('org', step, 'create', { b: 2, a: 1 }));
    expect(idempotencyKey('org', step, 'create', { a: 1 })).not.toBe(idempotencyKey('org', step, 'create', { a: 2 }));
  });
});
