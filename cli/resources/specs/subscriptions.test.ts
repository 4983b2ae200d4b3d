import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { polarSdk } from '../../../daemon/testing/v1.js';
import { seller, tillJson, tillOnTerminal, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;
let basic: { id: string };
let premium: { id: string };

/** A subscription as a customer starts one: a checkout confirmed with a sandbox test token (set-up, not under test). */
async function subscribe(email: string): Promise<string> {
  const sdk = polarSdk(daemon.url, acme.user.token);
  const checkout = await sdk.checkouts.create({ products: [basic.id], customerEmail: email });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  return (await sdk.checkouts.get({ id: checkout.id })).subscriptionId!;
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Subscription Shop');
  basic = await tillJson(['products', 'create', '--name', 'Basic', '--price', '1000:usd:month'], acme.env);
  premium = await tillJson(['products', 'create', '--name', 'Premium', '--price', '3000:usd:month'], acme.env);
});
afterAll(() => daemon?.close());

describe('till subscriptions, scripted with --json', () => {
  it('lists, gets, cancels with a reason and uncancels a subscription', async () => {
    const id = await subscribe('cli-cancel@example.com');
    const listed = await tillJson(['subscriptions', 'list', '--product', basic.id, '--active'], acme.env);
    expect(listed.items.map((s: { id: string }) => s.id)).toContain(id);
    expect(await tillJson(['subscriptions', 'get', id], acme.env)).toMatchObject({ id, status: 'active', amount: 1000, cancel_at_period_end: false });

    const canceled = await tillJson(['subscriptions', 'cancel', id, '--reason', 'too_expensive', '--comment', 'Over budget'], acme.env);
    expect(canceled).toMatchObject({ id, status: 'active', cancel_at_period_end: true, customer_cancellation_reason: 'too_expensive', customer_cancellation_comment: 'Over budget' });
    expect(canceled.ends_at).toBe(canceled.current_period_end);
    expect((await tillJson(['subscriptions', 'list', '--cancel-at-period-end'], acme.env)).items.map((s: { id: string }) => s.id)).toContain(id);
    const uncanceled = await tillJson(['subscriptions', 'uncancel', id], acme.env);
    expect(uncanceled).toMatchObject({ cancel_at_period_end: false, ends_at: null, customer_cancellation_reason: null });
  });

  it('changes product with invoice proration and applies a discount through update', async () => {
    const id = await subscribe('cli-update@example.com');
    const moved = await tillJson(['subscriptions', 'update', id, '--product', premium.id, '--proration', 'invoice'], acme.env);
    expect(moved).toMatchObject({ product_id: premium.id, amount: 3000 });
    const orders = await tillJson(['orders', 'list', '--subscription', id], acme.env);
    expect(orders.items.map((o: { billing_reason: string }) => o.billing_reason).sort()).toEqual(['subscription_create', 'subscription_update']);

    const discount = await tillJson(['discounts', 'create', '--name', 'Tenth', '--amount', '10%', '--duration', 'forever'], acme.env);
    expect(await tillJson(['subscriptions', 'update', id, '--discount', discount.id], acme.env)).toMatchObject({ discount_id: discount.id });
    expect(await tillJson(['subscriptions', 'update', id, '--discount', 'none'], acme.env)).toMatchObject({ discount_id: null });
  });

  it('revokes with --yes, refuses off a terminal without it, and exits 5 on an unknown reason', async () => {
    const id = await subscribe('cli-revoke@example.com');
    const refused = await till(['subscriptions', 'revoke', id, '--json'], acme.env);
    expect(refused.exitCode).toBe(2);
    expect(JSON.parse(refused.stderr).error.code).toBe('CONFIRMATION_REQUIRED');
    const badReason = await till(['subscriptions', 'cancel', id, '--reason', 'bored', '--json'], acme.env);
    expect(badReason.exitCode).toBe(5);
    expect(JSON.parse(badReason.stderr).error.code).toBe('INVALID_FLAG');
    expect((await tillJson(['subscriptions', 'get', id], acme.env)).status).toBe('active');

    const revoked = await tillJson(['subscriptions', 'revoke', id, '--reason', 'unused', '--yes'], acme.env);
    expect(revoked).toMatchObject({ status: 'canceled', customer_cancellation_reason: 'unused' });
    const again = await till(['subscriptions', 'revoke', id, '--yes', '--json'], acme.env);
    expect(again.exitCode).not.toBe(0);
    expect(JSON.parse(again.stderr).error.message).toContain('already canceled');
  });

  it('asks before revoking on a terminal, and revokes nothing when told no', async () => {
    const id = await subscribe('cli-ask@example.com');
    const child = tillOnTerminal(['subscriptions', 'revoke', id], acme.env, [['End subscription', 'n\r']]);
    const result = await child;
    expect(result.stdout).toContain('cli-ask@example.com');
    expect(result.exitCode).not.toBe(0);
    expect((await tillJson(['subscriptions', 'get', id], acme.env)).status).toBe('active');
  });
});
