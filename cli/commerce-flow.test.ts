import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from './testing/catalog.js';
import { till } from './testing/till.js';

// Issue 5's "Done means", as a CI pipeline would script it: only the built `till`, every step with --json, each
// step's input taken from the previous steps' JSON. A year of billing runs in one test-clock advance.

let daemon: TestDaemon;
let acme: Seller;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'CI Shop');
});
afterAll(() => daemon?.close());

describe('a year of commerce scripted with till --json', () => {
  it('sells a monthly product, refunds half, renews twelve times in a year on the test clock, then cancels', async () => {
    const run = (...args: string[]) => tillJson(args, acme.env);

    expect(await run('clock', 'sandbox', 'on')).toMatchObject({ sandbox: true });
    const product = await run('products', 'create', '--name', 'CI Pro', '--price', '1500:usd:month');
    expect(product).toMatchObject({ is_recurring: true, recurring_interval: 'month' });

    const checkout = await run('checkouts', 'create', '--product', product.id, '--customer-email', 'ci@example.com', '--customer-country', 'FR');
    expect(checkout).toMatchObject({ status: 'open', total_amount: 1500 });
    const paid = await run('checkouts', 'confirm', checkout.id, '--token', 'tok_visa');
    expect(paid).toMatchObject({ id: checkout.id, status: 'succeeded' });
    const subscriptionId: string = paid.subscription_id;
    expect(subscriptionId).toBeTruthy();

    const [first] = (await run('orders', 'list', '--checkout', checkout.id)).items;
    expect(first).toMatchObject({ status: 'paid', billing_reason: 'subscription_create', total_amount: 1500, subscription_id: subscriptionId });
    const refund = await run('refunds', 'create', '--order', first.id, '--amount', String(first.net_amount / 2), '--reason', 'customer_request', '--yes');
    expect(refund).toMatchObject({ order_id: first.id, amount: 750, status: 'succeeded' });
    expect(await run('orders', 'get', first.id)).toMatchObject({ status: 'partially_refunded', refunded_amount: 750, refundable_amount: 750 });

    const advanced = await run('clock', 'advance', '+1year');
    expect(advanced).toMatchObject({ jobs_failed: 0 });

    const renewals = (await run('orders', 'list', '--subscription', subscriptionId, '--all')).items.filter(
      (order: { billing_reason: string }) => order.billing_reason === 'subscription_cycle',
    );
    expect(renewals).toHaveLength(12);
    for (const order of renewals) expect(order).toMatchObject({ status: 'paid', total_amount: 1500, currency: 'usd' });
    const subscription = await run('subscriptions', 'get', subscriptionId);
    expect(subscription).toMatchObject({ status: 'active', cancel_at_period_end: false });
    expect(Date.parse(subscription.current_period_end)).toBeGreaterThan(Date.parse(advanced.now));

    const canceled = await run('subscriptions', 'cancel', subscriptionId, '--reason', 'unused');
    expect(canceled).toMatchObject({ cancel_at_period_end: true, ends_at: subscription.current_period_end });
    await run('clock', 'advance', '+1month');
    expect(await run('subscriptions', 'get', subscriptionId)).toMatchObject({ status: 'canceled', ended_at: subscription.current_period_end });
    const after = (await run('orders', 'list', '--subscription', subscriptionId, '--all')).items;
    expect(after).toHaveLength(13);
  });

  it('leaves a checkout open when the test token is declined, and pays it with another', async () => {
    const product = await tillJson(['products', 'create', '--name', 'Declined Pro', '--price', '900:usd:month'], acme.env);
    const checkout = await tillJson(['checkouts', 'create', '--product', product.id, '--customer-email', 'declined@example.com'], acme.env);
    const declined = await till(['checkouts', 'confirm', checkout.id, '--token', 'tok_chargeDeclined', '--country', 'FR', '--json'], acme.env);
    // docs/cli.md: a declined payment exits 1 (an error, not invalid input: another card pays).
    expect(declined.exitCode).toBe(1);
    expect(JSON.parse(declined.stderr).error).toMatchObject({ code: 'CHECKOUT_PAYMENT_DECLINED', message: expect.stringMatching(/declined/i) });
    expect(await tillJson(['checkouts', 'get', checkout.id], acme.env)).toMatchObject({ status: 'open', subscription_id: null });
    expect(await tillJson(['checkouts', 'confirm', checkout.id, '--token', 'tok_visa', '--country', 'FR'], acme.env)).toMatchObject({ status: 'succeeded' });
  });
});
