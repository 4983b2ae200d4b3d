import { describe, expect, it } from 'vitest';
import { applyPlan, type Send } from './apply.js';
import { checkCatalog } from './file.js';
import { serverFields } from './model.js';
import { buildPlan, type OrganizationState } from './plan.js';

const now = new Date('2026-11-25T12:00:00Z');
const discountId = '22222222-2222-4222-8222-222222222222';

/** The discount as tilld answers it: `amounts` per currency, and the deprecated `amount`/`currency` of one of them. */
const served = (amounts: Record<string, number>) => ({
  id: discountId,
  name: 'Five off',
  code: null,
  type: 'fixed',
  amounts,
  amount: amounts.usd,
  currency: 'usd',
  duration: 'once',
  max_redemptions: null,
  starts_at: null,
  ends_at: null,
  products: [],
  metadata: {},
});

const state = (amounts: Record<string, number>): OrganizationState => ({
  organization: { id: 'org', slug: 'acme' },
  objects: { meter: [], custom_field: [], benefit: [], discount: [served(amounts)], webhook: [], tax_rate: [], product: [] },
  keys: [{ kind: 'discount', key: 'five-off', object_id: discountId }],
});

const entriesOf = (discount: Record<string, unknown>) => checkCatalog('c.yaml', { version: 1, discounts: [{ key: 'five-off', name: 'Five off', type: 'fixed', duration: 'once', ...discount }] }).entries;

describe('fixed discounts in a catalog file', () => {
  it('take an amount per currency, compared with what tilld answers whatever the order of the currencies', () => {
    const entries = entriesOf({ amounts: { usd: 500, eur: 450 } });
    expect(entries[0].fields).toMatchObject({ amounts: { eur: 450, usd: 500 } });
    expect(buildPlan(entries, undefined, state({ usd: 500, eur: 450 }), { prune: false, now }).steps).toEqual([]);
    const [step] = buildPlan(entries, undefined, state({ usd: 500 }), { prune: false, now }).steps;
    expect(step.changes).toEqual([{ field: 'amounts', from: { usd: 500 }, to: { eur: 450, usd: 500 } }]);
  });

  it('keep reading an older file’s one amount and currency as that one currency', () => {
    const entries = entriesOf({ amount: 500, currency: 'usd' });
    expect(entries[0].fields).toMatchObject({ amounts: { usd: 500 } });
    expect(entries[0].fields).not.toHaveProperty('amount');
    expect(buildPlan(entries, undefined, state({ usd: 500 }), { prune: false, now }).steps).toEqual([]);
  });

  it('refuses both forms at once', () => {
    expect(() => entriesOf({ amounts: { usd: 500 }, amount: 500, currency: 'usd' })).toThrow(/amounts/);
  });

  it('pull writes amounts, and apply sends them', async () => {
    expect(serverFields('discount', served({ usd: 500, eur: 450 }), { keyOf: (_kind, id) => id })).toMatchObject({ amounts: { eur: 450, usd: 500 } });
    const sent: { method: string; path: string; body?: unknown }[] = [];
    const send: Send = async (method, path, body) => {
      sent.push({ method, path, body });
      return { ...served({ usd: 500, eur: 450 }), id: discountId };
    };
    const current = state({ usd: 500 });
    const plan = buildPlan(entriesOf({ amounts: { usd: 500, eur: 450 } }), undefined, current, { prune: false, now });
    await applyPlan(plan, current.keys, send);
    expect(sent.find((call) => call.method === 'PATCH')?.body).toMatchObject({ amounts: { eur: 450, usd: 500 } });
  });
});
