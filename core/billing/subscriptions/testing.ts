import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { setSandbox } from '../../jobs/advance.js';
import type { PaymentProcessor } from '../../payments/processor.js';
import { savePaymentMethod } from '../../payments/repository.js';
import { createSubscription, type SubscriptionCreateInput } from './service.js';

/**
 * Test set-up for the subscription domain without a checkout: a sandbox organization with a customer, recurring
 * products with fixed prices inserted as rows, saved sandbox cards, and subscriptions started the way checkout
 * fulfilment starts them (createSubscription in a transaction).
 */
export async function seedOrganization(db: Database, clock: Clock) {
  const organizationId = newId();
  const now = clock.now().toISOString();
  await db('organization').insert({ id: organizationId, name: 'Acme', slug: `acme-${organizationId.slice(0, 8)}`, createdAt: now });
  await setSandbox(db, clock, organizationId, true);
  const customerId = newId();
  await db('customers').insert({
    id: customerId, organization_id: organizationId, email: `ada-${customerId.slice(0, 6)}@example.com`, email_lower: `ada-${customerId.slice(0, 6)}@example.com`,
    email_verified: false, type: 'individual', name: 'Ada', metadata: '{}', created_at: now,
  });

  async function product(name: string, amount: number, options: { interval?: string; currency?: string } = {}) {
    const id = newId();
    const priceId = newId();
    await db('products').insert({
      id, organization_id: organizationId, name, description: null, visibility: 'public', recurring_interval: options.interval ?? 'month',
      recurring_interval_count: 1, is_archived: false, metadata: '{}', created_at: now,
    });
    await db('product_prices').insert({
      id: priceId, product_id: id, amount_type: 'fixed', source: 'catalog', price_currency: options.currency ?? 'usd', price_amount: amount,
      is_archived: false, position: 0, created_at: now,
    });
    return { id, priceId, amount };
  }

  async function card(payments: PaymentProcessor, token: string) {
    const method = await payments.setupPaymentMethod({ kind: 'token', token });
    return savePaymentMethod(db, { organizationId, customerId, processor: payments.name, ...method, createdAt: clock.now() });
  }

  async function subscribe(at: Clock, p: { id: string; priceId: string; amount: number }, overrides: Partial<SubscriptionCreateInput> = {}) {
    return db.transaction((trx) =>
      createSubscription(trx, at, {
        organizationId, customerId, productId: p.id, priceIds: [p.priceId], amount: p.amount, currency: 'usd', recurringInterval: 'month',
        recurringIntervalCount: 1, discountId: null, checkoutId: null, paymentMethodId: null, trialEnd: null, metadata: {}, customFieldData: {},
        ...overrides,
      }),
    );
  }

  return { organizationId, customerId, product, card, subscribe };
}
