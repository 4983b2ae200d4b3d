import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { CHARGE_JOB } from '../core/billing/subscriptions/job-kinds.js';
import { signUp, type SignedIn } from './testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from './testing/v1.js';

/**
 * Issue 16: a renewal that is declined (or needs the customer's authentication) moves the subscription to past_due
 * and mails the customer a link to pay it on-session, while dunning goes on. Sandbox organization, test clock,
 * everything over HTTP: the API, the mail in the local outbox, the pay page's form posts.
 */
let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let productId: string;

async function v1<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await v1Request(daemon.url, owner.token, method, path, body);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

async function eventually<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 40_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const advance = (by: string) => v1<{ jobs_failed: number }>('POST', `/organizations/${organizationId}/clock/advance`, { by });

/** Subscribes `email` with a sandbox token; `tok_chargeCustomerFail` pays now and declines every renewal. */
async function subscribe(email: string, token = 'tok_chargeCustomerFail'): Promise<{ subscriptionId: string; customerId: string }> {
  const sdk = polarSdk(daemon.url, owner.token);
  const checkout = await sdk.checkouts.create({ products: [productId], customerEmail: email, customerName: 'Pat Payer' });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: token, customerBillingAddress: { country: 'US' } } });
  const done = await sdk.checkouts.get({ id: checkout.id });
  expect(done.status).toBe('succeeded');
  return { subscriptionId: done.subscriptionId!, customerId: done.customerId! };
}

/** The pay links mailed to `email`, newest first, as the customer reads them in the mail. */
async function mailedLinks(email: string): Promise<{ url: string; token: string; subject: string; body: string }[]> {
  const mails = await daemon.db('mail_outbox').where({ to_address: email }).orderBy('created_at', 'desc');
  return mails.flatMap((mail) => {
    const match = /(https?:\/\/\S+\/pay\/(till_pay_[A-Za-z0-9_-]+))/.exec(String(mail.body));
    return match ? [{ url: match[1], token: match[2], subject: String(mail.subject), body: String(mail.body) }] : [];
  });
}

const subscriptionOf = (id: string) => daemon.db('subscriptions').where({ id }).first();
const renewalOrderOf = (subscriptionId: string) => daemon.db('orders').where({ subscription_id: subscriptionId, billing_reason: 'subscription_cycle' }).first();
const payLinkPayments = (orderId: string) => daemon.db('payments').where({ order_id: orderId, purpose: 'pay_link' }).orderBy('created_at');

/** Posts the pay page's form as a browser would (same origin), without following the redirect. */
const postForm = (path: string, form: Record<string, string>) =>
  fetch(`${daemon.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: daemon.url },
    body: new URLSearchParams(form),
  });
const card = (number: string) => ({ intent: 'pay', card_number: number, card_expiry: '12 / 34', card_cvc: '123' });
const page = async (path: string) => {
  const res = await fetch(`${daemon.url}${path}`, { redirect: 'manual' });
  return { status: res.status, html: await res.text(), location: res.headers.get('location') };
};

/** A subscription whose first renewal was declined: past_due, with the mailed link. */
async function declinedRenewal(email: string) {
  const { subscriptionId, customerId } = await subscribe(email);
  expect((await advance('+1month')).jobs_failed).toBe(0);
  // The daemon's own job runner may take some of the advance's jobs (on PostgreSQL above all): poll for the mail.
  const link = await eventually(async () => (await mailedLinks(email))[0], `the pay link mailed to ${email}`);
  expect(await subscriptionOf(subscriptionId)).toMatchObject({ status: 'past_due', dunning_attempts: 1 });
  return { subscriptionId, customerId, link, path: new URL(link.url).pathname, order: await renewalOrderOf(subscriptionId) };
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Dora Dunning' });
  organizationId = await createOrganization(owner, 'Renewals Inc');
  await v1('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
  productId = (await v1<{ id: string }>('POST', '/products/', { organization_id: organizationId, name: 'Pro Monthly', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1200, price_currency: 'usd' }] })).id;
});
afterAll(() => daemon?.close());

describe('a declined renewal mails the customer a link to pay it', { timeout: 120_000 }, () => {
  it('mails a link to a page that shows what is owed, and keeps only the hash of its token', async () => {
    const { link, path, order } = await declinedRenewal('mailed@example.com');
    expect(link.subject).toBe('Your payment to Renewals Inc failed');
    expect(link.body).toContain('The payment of 12.00 USD for your Pro Monthly subscription with Renewals Inc did not go through');
    expect(link.url.startsWith(`${daemon.url}/pay/`)).toBe(true);
    const stored = await daemon.db('pay_links').where({ order_id: order.id });
    expect(stored).toHaveLength(1);
    expect(stored[0].token_hash).toBe(createHash('sha256').update(link.token).digest('hex'));
    // The token itself is nowhere at rest.
    for (const table of ['pay_links', 'payments', 'jobs']) {
      const rows = await daemon.db(table);
      expect(JSON.stringify(rows)).not.toContain(link.token);
    }
    const shown = await page(path);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('Pay your Pro Monthly renewal');
    expect(shown.html).toContain('data-testid="owed-amount"><strong>$12.00</strong>');
    expect(shown.html).toContain('4242 4242 4242 4242'); // the sandbox's test cards
  });

  it('answers 404 for a link that does not exist', async () => {
    const shown = await page('/pay/till_pay_nothing-here');
    expect(shown.status).toBe(404);
    expect(shown.html).toContain('Payment link not found');
    expect((await postForm('/pay/till_pay_nothing-here', card('4242424242424242'))).status).toBe(404);
  });

  it('refuses a declined card on the page without changing the subscription or using up a dunning attempt', async () => {
    const { subscriptionId, path, order } = await declinedRenewal('declines-again@example.com');
    const res = await postForm(path, card('4000000000000002'));
    expect(res.status).toBe(402);
    expect(await res.text()).toContain('Your payment did not go through: Your card was declined.');
    expect(await payLinkPayments(order.id)).toMatchObject([{ status: 'failed', attempt: null, decline_code: 'card_declined' }]);
    expect(await subscriptionOf(subscriptionId)).toMatchObject({ status: 'past_due', dunning_attempts: 1 });
    expect(await daemon.db('jobs').where({ kind: CHARGE_JOB, subject_id: subscriptionId })).toHaveLength(1);
    expect(await renewalOrderOf(subscriptionId)).toMatchObject({ status: 'pending' });
  });

  it('refuses a malformed card beside its input, charging nothing', async () => {
    const { path, order } = await declinedRenewal('typo@example.com');
    const res = await postForm(path, { ...card('4242'), card_cvc: '' });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('Your card number is incomplete or not a number.');
    expect(html).toContain('Enter your card&#x27;s security code.');
    expect(await payLinkPayments(order.id)).toHaveLength(0);
  });

  it('pays the owed renewal on-session: the order is paid, the subscription active with the new card, dunning stopped, the events of a paid renewal recorded', async () => {
    const { subscriptionId, path, order } = await declinedRenewal('pays@example.com');
    const since = (await daemon.db('webhook_events').max('seq as seq').first())?.seq ?? 0;
    const res = await postForm(path, card('4242424242424242'));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(path);
    expect(await renewalOrderOf(subscriptionId)).toMatchObject({ status: 'paid' });
    const [payment] = await payLinkPayments(order.id);
    expect(payment).toMatchObject({ status: 'succeeded', attempt: null, method_last4: '4242', processor: 'sandbox' });
    expect((await renewalOrderOf(subscriptionId)).payment_id).toBe(payment.id);
    const s = await subscriptionOf(subscriptionId);
    expect(s).toMatchObject({ status: 'active', dunning_attempts: 0, dunning_order_id: null, past_due_at: null });
    expect(await daemon.db('payment_methods').where({ id: s.payment_method_id }).first()).toMatchObject({ last4: '4242' });
    expect(await daemon.db('jobs').where({ kind: CHARGE_JOB, subject_id: subscriptionId })).toHaveLength(0);
    const events = (await daemon.db('webhook_events').where('seq', '>', since).where({ organization_id: organizationId }).orderBy('seq')).map((event) => String(event.type));
    expect(events).toEqual(expect.arrayContaining(['order.updated', 'order.paid', 'subscription.updated', 'subscription.active']));
    // The page now says it is paid, and a second press charges nothing.
    const shown = await page(path);
    expect(shown.html).toContain('Your renewal is paid');
    expect(shown.html).toContain('Thank you: your payment of $12.00 went through.');
    await postForm(path, card('4242424242424242'));
    expect(await payLinkPayments(order.id)).toHaveLength(1);
    // The next renewal charges the card that paid.
    expect((await advance('+1month')).jobs_failed).toBe(0);
    await eventually(async () => {
      const orders = await daemon.db('orders').where({ subscription_id: subscriptionId, billing_reason: 'subscription_cycle', status: 'paid' });
      return orders.length === 2 ? orders : undefined;
    }, 'the next renewal paid with the new card');
  });

  it('lets the customer pass 3-D Secure on the page, and holds the dunning retry that comes due meanwhile so the order is charged once', async () => {
    const { subscriptionId, path, order } = await declinedRenewal('authenticates@example.com');
    // The customer opens the link a quarter of an hour before the first retry (two days after the decline) is due.
    expect((await advance('+47h')).jobs_failed).toBe(0);
    expect((await advance('+45m')).jobs_failed).toBe(0);
    const res = await postForm(path, card('4000002760003184'));
    expect(res.status).toBe(303);
    const authenticate = res.headers.get('location')!;
    expect(authenticate).toMatch(/^\/sandbox\/authenticate\//);
    const [waiting] = await payLinkPayments(order.id);
    expect(waiting).toMatchObject({ status: 'requires_action' });
    // The retry comes due while the customer authenticates: it waits for the customer's payment instead of
    // charging the saved card, past the 30-minute window the customer has to authenticate.
    expect((await advance('+20m')).jobs_failed).toBe(0);
    const clock = await v1<{ now: string }>('GET', `/organizations/${organizationId}/clock`);
    await eventually(async () => {
      const held = await daemon.db('jobs').where({ kind: CHARGE_JOB, subject_id: subscriptionId }).first();
      return Number(held?.run_at_ms) > new Date(clock.now).getTime() + 20 * 60_000 ? held : undefined;
    }, 'the dunning retry to be held');
    expect(await daemon.db('payments').where({ order_id: order.id, purpose: 'subscription' })).toHaveLength(1);
    expect(await subscriptionOf(subscriptionId)).toMatchObject({ status: 'past_due', dunning_attempts: 1 });
    // While it waits, the page shows it is being confirmed and takes no second card.
    expect((await page(path)).html).toContain('Confirming your payment');
    expect((await postForm(path, card('4242424242424242'))).status).toBe(200);
    expect(await payLinkPayments(order.id)).toHaveLength(1);

    const done = await postForm(authenticate, { outcome: 'complete' });
    expect(done.status).toBe(303);
    const back = done.headers.get('location')!;
    expect(back).toMatch(new RegExp(`^/pay/return/${waiting.id}\\?key=[A-Za-z0-9_-]{32}&payment_intent=`));
    // The return names the payment and a key only the paying browser was given: the payment id alone (the seller's
    // API lists it), a forged key or the link's token in its place open nothing.
    const key = new URL(back, daemon.url).searchParams.get('key')!;
    for (const forged of [`/pay/return/${waiting.id}`, `/pay/return/${waiting.id}?key=`, `/pay/return/${waiting.id}?key=${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, `/pay/return/${waiting.id}?key=${path.slice('/pay/'.length)}`, `/pay/return/${waiting.id}?key=${key}&key=${key}`, `/pay/return/pay_unknown?key=${key}`]) {
      const refused = await page(forged);
      expect(refused.status, forged).toBe(404);
      expect(refused.html).toContain('Payment link not found');
      expect(refused.html).not.toContain('authenticates@example.com');
    }
    const shown = await page(back);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('Thank you: your payment of $12.00 went through.');
    expect(await subscriptionOf(subscriptionId)).toMatchObject({ status: 'active' });
    expect(await daemon.db('payments').where({ order_id: order.id, status: 'succeeded' })).toHaveLength(1);
    expect(await daemon.db('jobs').where({ kind: CHARGE_JOB, subject_id: subscriptionId })).toHaveLength(0);
  });

  it('refuses to pay while another payment of the order is processing (409 PAYMENT_IN_PROGRESS), so the order is never charged twice', async () => {
    const { subscriptionId, path, order } = await declinedRenewal('in-progress@example.com');
    // The saved card now answers "processing" (as a bank debit would: the sandbox's 8807 behaviour), so the dunning
    // retry two days later is still waiting for the bank when the customer opens the link.
    const s = await subscriptionOf(subscriptionId);
    expect(await daemon.db('payment_methods').where({ id: s.payment_method_id }).update({ processor_method_id: 'pm_sandbox_prcok_inprogress' })).toBe(1);
    expect((await advance('+2d')).jobs_failed).toBe(0);
    const retry = await eventually(async () => daemon.db('payments').where({ order_id: order.id, purpose: 'subscription', status: 'processing' }).first(), 'the dunning retry to be processing');
    const intentsBefore = await daemon.db('sandbox_intents').count('* as n').first();

    const res = await postForm(path, card('4242424242424242'));
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('A payment of this amount is being processed already.');
    expect(await payLinkPayments(order.id)).toHaveLength(0);
    expect(await daemon.db('sandbox_intents').count('* as n').first()).toEqual(intentsBefore);
    expect(await renewalOrderOf(subscriptionId)).toMatchObject({ status: 'pending' });
    expect(await daemon.db('payments').where({ order_id: order.id, status: 'processing' })).toMatchObject([{ id: retry.id }]);
  });

  it('says so when the customer fails 3-D Secure, and the page takes another card', async () => {
    const { subscriptionId, path } = await declinedRenewal('fails-3ds@example.com');
    const res = await postForm(path, card('4000002760003184'));
    const done = await postForm(res.headers.get('location')!, { outcome: 'fail' });
    const shown = await page(done.headers.get('location')!);
    expect(shown.status).toBe(402);
    expect(shown.html).toContain('Your payment was not completed');
    expect(await subscriptionOf(subscriptionId)).toMatchObject({ status: 'past_due' });
    expect((await page(path)).html).toContain('Pay your Pro Monthly renewal');
  });

  it('refuses a link once it has expired, and mails a fresh one with the next declined retry', async () => {
    const { subscriptionId, path, order } = await declinedRenewal('expires@example.com');
    // The first retry comes two days later and is declined too: a second link.
    expect((await advance('+2d')).jobs_failed).toBe(0);
    const links = await eventually(async () => {
      const mailed = await mailedLinks('expires@example.com');
      return mailed.length === 2 ? mailed : undefined;
    }, 'the second pay link');
    expect(await subscriptionOf(subscriptionId)).toMatchObject({ status: 'past_due', dunning_attempts: 2 });
    expect(await daemon.db('pay_links').where({ order_id: order.id })).toHaveLength(2);
    expect((await advance('+6d')).jobs_failed).toBe(0);
    const shown = await page(path);
    expect(shown.status).toBe(410);
    expect(shown.html).toContain('This payment link has expired');
    expect((await postForm(path, card('4242424242424242'))).status).toBe(410);
    expect(await payLinkPayments(order.id)).toHaveLength(0);
    // The newer link still works.
    expect((await page(new URL(links[0].url).pathname)).status).toBe(200);
  });

  it('closes the link when the subscription ends before it is paid', async () => {
    const { subscriptionId, path } = await declinedRenewal('revoked@example.com');
    await v1('DELETE', `/subscriptions/${subscriptionId}`);
    const shown = await page(path);
    expect(shown.status).toBe(409);
    expect(shown.html).toContain('This subscription no longer waits for this payment.');
  });
});
