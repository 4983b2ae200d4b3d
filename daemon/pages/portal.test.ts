import type { Polar } from '@polar-sh/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOutboxMail } from '../../core/mail/mailer.js';
import { refreshedCustomerMeter } from '../../core/metering/testing.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';
import { cookiesOf, postForm } from './testing.js';

let daemon: TestDaemon;
let owner: SignedIn;
let seller: Polar;
let organizationId: string;
let slug: string;
let productId: string;

beforeAll(async () => {
  // Requests name their client address in X-Forwarded-For, so the per-IP limit of one test does not reach the next.
  daemon = await startTestDaemon({ TILL_TRUST_PROXY: 'loopback' });
  owner = await signUp(daemon.url, { name: 'Paula Portal' });
  organizationId = await createOrganization(owner, 'Harbor Tools');
  seller = polarSdk(daemon.url, owner.token);
  slug = (await seller.organizations.get({ id: organizationId })).slug;
  expect((await v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
  productId = (await seller.products.create({ organizationId, name: 'Harbor Cloud', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 900 }] } as never)).id;
});
afterAll(() => daemon?.close());

const unique = (label: string) => `${label}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const base = () => `/portal/${slug}`;

async function buy(email: string) {
  const checkout = await seller.checkouts.create({ products: [productId], customerEmail: email });
  await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  const done = await seller.checkouts.get({ id: checkout.id });
  return { customerId: done.customerId!, subscriptionId: done.subscriptionId! };
}

const mailsTo = (email: string) => listOutboxMail(daemon.db, { to: email, limit: 20 });
const codeIn = (subject: string) => /sign-in code: (\d{6})$/.exec(subject)?.[1];
/** The newest sign-in code mailed to `email` (not simply the newest mail: a purchase's receipt is mailed in the background). */
async function mailedCode(email: string): Promise<string> {
  const code = (await mailsTo(email)).map((mail) => codeIn(mail.subject)).find(Boolean);
  if (!code) throw new Error(`no sign-in code mailed to ${email}`);
  return code;
}
const askCode = (email: string, ip = '203.0.113.7') => postForm(daemon.url, `${base()}/sign-in`, { email }, { 'x-forwarded-for': ip });
const sendCode = (email: string, code: string) => postForm(daemon.url, `${base()}/sign-in/code`, { email, code });
const wrongCodeOf = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('the customer portal pages over HTTP', () => {
  it('answers a page saying so, with 404, for the portal of an unknown organization', async () => {
    const res = await fetch(`${daemon.url}/portal/no-such-seller`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('This customer portal link is not valid.');
  });

  it('answers a customer and a stranger alike, and mails a code to the customer only', async () => {
    const customer = unique('known');
    await seller.customers.create({ organizationId, email: customer, name: 'Known' });
    const stranger = unique('stranger');
    const [known, unknown] = [await askCode(customer), await askCode(stranger)];
    expect([known.status, unknown.status]).toEqual([303, 303]);
    expect(known.headers.get('location')).toBe(`${base()}/sign-in/code?email=${encodeURIComponent(customer)}`);
    expect(unknown.headers.get('location')).toBe(`${base()}/sign-in/code?email=${encodeURIComponent(stranger)}`);
    expect(await mailsTo(stranger)).toEqual([]);
    const [mail] = await mailsTo(customer);
    expect(mail!.subject).toMatch(/^Your Harbor Tools sign-in code: \d{6}$/);
    expect(mail!.body).toContain(`${daemon.baseUrl}${base()}/sign-in/code?email=`);
    // The stranger's "code" does not exist: any guess reads as a wrong code, exactly as the customer's wrong guess.
    const guessed = await sendCode(stranger, '123456');
    const wrong = await sendCode(customer, wrongCodeOf(await mailedCode(customer)));
    expect([guessed.status, wrong.status]).toEqual([400, 400]);
    const message = 'That code is not right, or no longer works.';
    expect(await guessed.text()).toContain(message);
    expect(await wrong.text()).toContain(message);
  });

  it('signs in once with the mailed code: the portal cookie opens the overview, and the same code does not sign in again', async () => {
    const email = unique('once');
    await buy(email);
    await askCode(email);
    const code = await mailedCode(email);
    const signedIn = await sendCode(email, code);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(base());
    const setCookie = signedIn.headers.getSetCookie()[0]!;
    expect(setCookie).toMatch(new RegExp(`^till_portal=till_cst_[^;]+; Path=${base()}; HttpOnly; SameSite=Lax; Max-Age=3600$`));
    const overview = await fetch(`${daemon.url}${base()}`, { headers: { cookie: cookiesOf(signedIn) } });
    expect(overview.status).toBe(200);
    const html = await overview.text();
    expect(html).toContain('Your account');
    expect(html).toContain('Harbor Cloud');
    expect(html).toContain(email);
    expect((await sendCode(email, code)).status).toBe(400);
    // The code is kept as an HMAC only.
    const rows = await daemon.db('customer_portal_codes').select('code_hash', 'email_lower', 'ip_hash');
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(JSON.stringify(rows)).not.toContain('203.0.113.7');
  });

  it('stops a code after 5 wrong tries, even for the right code after them', async () => {
    const email = unique('guesser');
    await seller.customers.create({ organizationId, email, name: 'Guesser' });
    await askCode(email, '203.0.113.20');
    const code = await mailedCode(email);
    for (let i = 0; i < 5; i += 1) expect((await sendCode(email, wrongCodeOf(code))).status).toBe(400);
    expect((await sendCode(email, code)).status).toBe(400);
  });

  it('mails at most 3 codes per address in 15 minutes, then answers 429 the same for a customer and a stranger', async () => {
    const email = unique('many');
    await seller.customers.create({ organizationId, email, name: 'Many' });
    const stranger = unique('many-stranger');
    for (let i = 0; i < 3; i += 1) {
      expect((await askCode(email, `198.51.100.${i}`)).status).toBe(303);
      expect((await askCode(stranger, `198.51.100.${10 + i}`)).status).toBe(303);
    }
    const [refused, refusedStranger] = [await askCode(email, '198.51.100.99'), await askCode(stranger, '198.51.100.98')];
    expect([refused.status, refusedStranger.status]).toEqual([429, 429]);
    expect(await refused.text()).toContain('Too many codes were asked for. Wait 15 minutes');
    expect(await mailsTo(email)).toHaveLength(3);
  });

  it('mails at most 10 codes per IP in 15 minutes, whatever the addresses', async () => {
    const ip = '192.0.2.77';
    for (let i = 0; i < 10; i += 1) expect((await askCode(unique(`ip${i}`), ip)).status).toBe(303);
    expect((await askCode(unique('ip-last'), ip)).status).toBe(429);
  });

  it('holds both limits under a burst of concurrent requests: the count and the new code are one step', async () => {
    const email = unique('burst');
    await seller.customers.create({ organizationId, email, name: 'Burst' });
    const byEmail = await Promise.all(Array.from({ length: 8 }, (_, i) => askCode(email, `198.18.0.${i}`)));
    expect(byEmail.map((res) => res.status).sort()).toEqual([303, 303, 303, 429, 429, 429, 429, 429]);
    expect(await daemon.db('customer_portal_codes').where({ email_lower: email })).toHaveLength(3);
    expect(await mailsTo(email)).toHaveLength(3);

    const byIp = await Promise.all(Array.from({ length: 14 }, (_, i) => askCode(unique(`burst-ip${i}`), '198.18.1.1')));
    expect(byIp.filter((res) => res.status === 303)).toHaveLength(10);
    expect(byIp.filter((res) => res.status === 429)).toHaveLength(4);
  });

  it('trades the portal link for a session of its own and never logs the token', async () => {
    const email = unique('link');
    const { customerId } = await buy(email);
    const session = await seller.customerSessions.create({ customerId });
    const res = await fetch(session.customerPortalUrl, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(base());
    const cookie = cookiesOf(res);
    expect(cookie).toMatch(/^till_portal=till_cst_/);
    expect(cookie).not.toContain(session.token);
    expect((await fetch(`${daemon.url}${base()}`, { headers: { cookie } })).status).toBe(200);
    expect(JSON.stringify(daemon.logs)).not.toContain(session.token);
    expect(JSON.stringify(daemon.logs)).not.toContain(cookie.split('=')[1]);

    // A dead link leads to the sign-in form, saying why.
    const dead = await fetch(`${daemon.url}${base()}?customer_session_token=till_cst_nothing`, { redirect: 'manual' });
    expect(dead.headers.get('location')).toBe(`${base()}?notice=link-expired`);
    expect(await (await fetch(`${daemon.url}${dead.headers.get('location')}`)).text()).toContain('That sign-in link has expired');
  });

  it('opens nothing with another organization’s customer session, and sign-out ends the session on the server', async () => {
    const otherOrg = await createOrganization(owner, 'Other Harbor');
    const stranger = await seller.customers.create({ organizationId: otherOrg, email: unique('other'), name: 'Other' });
    const foreign = await seller.customerSessions.create({ customerId: stranger.id });
    const refused = await fetch(`${daemon.url}${base()}`, { headers: { cookie: `till_portal=${foreign.token}` } });
    expect(await refused.text()).toContain('Email me a code');

    const { customerId } = await buy(unique('leaver'));
    const cookie = cookiesOf(await fetch((await seller.customerSessions.create({ customerId })).customerPortalUrl, { redirect: 'manual' }));
    const out = await postForm(daemon.url, `${base()}/sign-out`, {}, { cookie });
    expect(out.headers.get('location')).toBe(`${base()}?notice=signed-out`);
    expect(out.headers.getSetCookie()[0]).toContain('Max-Age=0');
    expect(await (await fetch(`${daemon.url}${base()}`, { headers: { cookie } })).text()).toContain('Email me a code');
  });

  it('serves the invoice PDF of an order once it has a billing name and address, and says what is missing before', async () => {
    const { customerId } = await buy(unique('invoice'));
    const [order] = (await seller.orders.list({ customerId })).result.items;
    const cookie = cookiesOf(await fetch((await seller.customerSessions.create({ customerId })).customerPortalUrl, { redirect: 'manual' }));
    const missing = await fetch(`${daemon.url}${base()}/orders/${order!.id}/invoice`, { headers: { cookie }, redirect: 'manual' });
    expect(missing.status).toBe(409);
    expect(await missing.text()).toContain('An invoice needs a billing name and address');
    await seller.orders.update({ id: order!.id, orderUpdate: { billingName: 'Ada Lovelace', billingAddress: { country: 'FR', line1: '1 rue de la Paix', city: 'Paris', postalCode: '75002' } } });
    const link = await fetch(`${daemon.url}${base()}/orders/${order!.id}/invoice`, { headers: { cookie }, redirect: 'manual' });
    expect(link.status).toBe(303);
    expect(link.headers.get('location')).toMatch(new RegExp(`^/v1/orders/${order!.id}/invoice\\.pdf\\?expires=\\d+&signature=`));
    const pdf = await fetch(`${daemon.url}${link.headers.get('location')}`);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
    // Another customer's order is not found, as an unknown one.
    const other = await buy(unique('invoice-other'));
    const [theirs] = (await seller.orders.list({ customerId: other.customerId })).result.items;
    expect((await fetch(`${daemon.url}${base()}/orders/${theirs!.id}/invoice`, { headers: { cookie }, redirect: 'manual' })).status).toBe(404);
  });

  it('shows each meter’s usage against the units a benefit credited, as a bar', async () => {
    const meter = await seller.meters.create({
      organizationId,
      name: 'Harbor API calls',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'harbor.call' }] },
      aggregation: { func: 'count' },
    });
    const credit = await seller.benefits.create({ organizationId, type: 'meter_credit', description: '100 API calls', properties: { units: 100, rollover: false, meterId: meter.id } } as never);
    const product = await seller.products.create({ organizationId, name: 'Harbor API', prices: [{ amountType: 'fixed', priceAmount: 500 }] } as never);
    await seller.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [credit.id] } });
    const checkout = await seller.checkouts.create({ products: [product.id], customerEmail: unique('usage') });
    await polarSdk(daemon.url, '').checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
    const { customerId } = await seller.checkouts.get({ id: checkout.id });
    const events = Array.from({ length: 30 }, (_, i) => ({ name: 'harbor.call', customer_id: customerId, external_id: `harbor-${i}`, organization_id: organizationId }));
    expect((await v1Request(daemon.url, owner.token, 'POST', '/events/ingest', { events })).status).toBe(200);
    await refreshedCustomerMeter(daemon.db, organizationId, customerId!, meter.id);
    const cookie = cookiesOf(await fetch((await seller.customerSessions.create({ customerId: customerId! })).customerPortalUrl, { redirect: 'manual' }));
    const html = await (await fetch(`${daemon.url}${base()}`, { headers: { cookie } })).text();
    expect(html).toContain('<progress class="meter-bar" max="100" value="30" aria-label="Harbor API calls: 30 used">');
    expect(html).toContain('30 used of 100 included · 70 left');
  });

  it('changes plan in two steps: the prorated amount is shown before confirming, then subscription.updated is emitted', async () => {
    const plus = await seller.products.create({ organizationId, name: 'Harbor Cloud Plus', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1900 }] } as never);
    const hidden = await seller.products.create({ organizationId, name: 'Harbor Secret', visibility: 'private', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 100 }] } as never);
    const { customerId, subscriptionId } = await buy(unique('plan'));
    const cookie = cookiesOf(await fetch((await seller.customerSessions.create({ customerId })).customerPortalUrl, { redirect: 'manual' }));
    const change = `${base()}/subscriptions/${subscriptionId}/change`;
    expect(await (await fetch(`${daemon.url}${base()}`, { headers: { cookie } })).text()).toContain(`href="${change}"`);

    const choices = await (await fetch(`${daemon.url}${change}`, { headers: { cookie } })).text();
    expect(choices).toContain('Harbor Cloud Plus, $19.00');
    expect(choices).not.toContain('Harbor Secret');
    expect(choices).not.toContain('Confirm');

    // Reviewing changes nothing; the page shows what previewCustomerPlanChange computes (prorate: on the next charge).
    const review = await fetch(`${daemon.url}${change}?product_id=${plus.id}`, { headers: { cookie } });
    const reviewed = await review.text();
    expect(review.status).toBe(200);
    expect(reviewed).toContain('data-testid="plan-preview"');
    expect(reviewed).toMatch(/Nothing is charged now: \$\d+\.\d\d is added to your next charge/);
    expect(reviewed).toContain('Confirm: move to Harbor Cloud Plus');
    expect((await seller.subscriptions.get({ id: subscriptionId })).productId).toBe(productId);

    // A plan not offered (private) is refused as the API refuses it, and nothing changes.
    const refused = await postForm(daemon.url, change, { product_id: hidden.id }, { cookie });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('Product not found.');

    const subscriptionEvents = async () =>
      (await listEvents(daemon.db, organizationId)).filter((e) => e.payload.type.startsWith('subscription.') && (e.payload.data as { id: string }).id === subscriptionId).map((e) => e.payload.type);
    const before = (await subscriptionEvents()).length;
    const confirmed = await postForm(daemon.url, change, { product_id: plus.id }, { cookie });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toBe(`${base()}?notice=plan-changed`);
    expect(await seller.subscriptions.get({ id: subscriptionId })).toMatchObject({ productId: plus.id, amount: 1900 });
    expect((await subscriptionEvents()).slice(before)).toEqual(['subscription.updated']);
    const overview = await (await fetch(`${daemon.url}${base()}?notice=plan-changed`, { headers: { cookie } })).text();
    expect(overview).toContain('Your plan is changed.');
    expect(overview).toContain('Harbor Cloud Plus');

    // A seller that does not let customers change plan: the page says so and a post is refused.
    expect((await v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}`, { subscription_settings: { allow_customer_updates: false } })).status).toBe(200);
    try {
      expect(await (await fetch(`${daemon.url}${change}`, { headers: { cookie } })).text()).toContain('does not let customers change plan here');
      const forbidden = await postForm(daemon.url, change, { product_id: productId }, { cookie });
      expect(forbidden.status).toBe(409);
      expect(await forbidden.text()).toContain('Updating subscription plan is not allowed.');
    } finally {
      await v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}`, { subscription_settings: { allow_customer_updates: true } });
    }
  });

  it('updates the card: a declined one is refused, a new one becomes the subscription’s, 3-D Secure comes back to confirm, and a card is removed', async () => {
    const { customerId, subscriptionId } = await buy(unique('card'));
    const cookie = cookiesOf(await fetch((await seller.customerSessions.create({ customerId })).customerPortalUrl, { redirect: 'manual' }));
    const cards = `${base()}/payment-methods`;
    expect(await (await fetch(`${daemon.url}${base()}`, { headers: { cookie } })).text()).toContain(`href="${cards}"`);
    const page = await (await fetch(`${daemon.url}${cards}`, { headers: { cookie } })).text();
    expect(page).toContain('Visa ending in 4242');
    const card = (number: string) => ({ card_number: number, card_expiry: '12 / 34', card_cvc: '123', intent: 'pay' });

    const declined = await postForm(daemon.url, cards, card('4000000000000002'), { cookie });
    expect(declined.status).toBe(402);
    expect(await declined.text()).toContain('Could not add this payment method: Your card was declined.');

    const saved = await postForm(daemon.url, cards, card('5555555555554444'), { cookie });
    expect(saved.headers.get('location')).toBe(`${cards}?notice=card-added`);
    const [newest] = await daemon.db('payment_methods').where({ customer_id: customerId }).orderBy('created_at', 'desc');
    expect(newest).toMatchObject({ brand: 'mastercard', last4: '4444' });
    expect((await daemon.db('subscriptions').where({ id: subscriptionId }).first()).payment_method_id).toBe(newest.id);

    // 3-D Secure: the sandbox bank's page, then back to the portal, which saves the card.
    const asked = await postForm(daemon.url, cards, card('4000002760003184'), { cookie });
    const bank = asked.headers.get('location')!;
    expect(bank).toMatch(/^\/sandbox\/authenticate\/seti_sandbox_/);
    expect(await (await fetch(`${daemon.url}${bank}`)).text()).toContain('confirm saving this card');
    const back = await postForm(daemon.url, bank, { outcome: 'complete' });
    expect(back.headers.get('location')).toMatch(new RegExp(`^${cards}/return\\?setup_intent=seti_sandbox_\\w+&redirect_status=succeeded$`));
    const confirmed = await fetch(`${daemon.url}${back.headers.get('location')}`, { headers: { cookie }, redirect: 'manual' });
    expect(confirmed.headers.get('location')).toBe(`${cards}?notice=card-added`);
    const listed = await (await fetch(`${daemon.url}${cards}`, { headers: { cookie } })).text();
    expect(listed).toContain('Visa ending in 3184');
    expect(await daemon.db('payment_methods').where({ customer_id: customerId })).toHaveLength(3);

    // The first card goes; the subscription keeps the one it was given.
    const [first] = await daemon.db('payment_methods').where({ customer_id: customerId, last4: '4242' });
    const removed = await postForm(daemon.url, `${cards}/${first.id}/delete`, {}, { cookie });
    expect(removed.headers.get('location')).toBe(`${cards}?notice=card-removed`);
    expect(await daemon.db('payment_methods').where({ customer_id: customerId })).toHaveLength(2);
  });

  it('changes the email address by a link mailed to the new one, confirmed with a button, and signs in with the new session', async () => {
    const settings = (allow: boolean) => v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}`, { customer_portal_settings: { customer: { allow_email_change: allow } } });
    const { customerId } = await buy(unique('mover'));
    const cookie = cookiesOf(await fetch((await seller.customerSessions.create({ customerId })).customerPortalUrl, { redirect: 'manual' }));
    expect(await (await fetch(`${daemon.url}${base()}/email`, { headers: { cookie } })).text()).toContain('does not let customers change their email address');
    expect((await settings(true)).status).toBe(200);
    try {
      expect(await (await fetch(`${daemon.url}${base()}`, { headers: { cookie } })).text()).toContain(`href="${base()}/email"`);
      const newEmail = unique('moved');
      const asked = await postForm(daemon.url, `${base()}/email`, { email: newEmail }, { cookie });
      expect(asked.headers.get('location')).toBe(`${base()}/email?notice=sent`);
      const [mail] = await mailsTo(newEmail);
      const link = /(http\S+verify-email\?token=\S+)/.exec(mail!.body)![1]!;
      expect(link.startsWith(`${daemon.baseUrl}${base()}/verify-email?token=till_cev_`)).toBe(true);
      const path = new URL(link).pathname + new URL(link).search;
      const page = await (await fetch(`${daemon.url}${path}`)).text();
      expect(page).toContain(newEmail);
      expect((await seller.customers.get({ id: customerId })).email).not.toBe(newEmail);
      const token = new URL(link).searchParams.get('token')!;
      const done = await postForm(daemon.url, `${base()}/verify-email`, { token });
      expect(done.headers.get('location')).toBe(`${base()}?notice=email-changed`);
      const signedInCookie = cookiesOf(done);
      const overview = await (await fetch(`${daemon.url}${base()}?notice=email-changed`, { headers: { cookie: signedInCookie } })).text();
      expect(overview).toContain('Your email address is changed.');
      expect(overview).toContain(newEmail);
      expect(await seller.customers.get({ id: customerId })).toMatchObject({ email: newEmail, emailVerified: true });
      // The link works once.
      expect((await postForm(daemon.url, `${base()}/verify-email`, { token })).status).toBe(400);
    } finally {
      await settings(false);
    }
  });

  it('refuses a cancellation posted from another site', async () => {
    const { customerId, subscriptionId } = await buy(unique('csrf'));
    const cookie = cookiesOf(await fetch((await seller.customerSessions.create({ customerId })).customerPortalUrl, { redirect: 'manual' }));
    const res = await postForm(daemon.url, `${base()}/subscriptions/${subscriptionId}/cancel`, { reason: 'other' }, { cookie, origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect((await seller.subscriptions.get({ id: subscriptionId })).cancelAtPeriodEnd).toBe(false);
  });
});

describe('customer mail', () => {
  it('mails the order receipt, the renewal receipt and the confirmation of a cancellation, once each', async () => {
    const email = unique('mailed');
    const { customerId, subscriptionId } = await buy(email);
    await expect.poll(async () => (await mailsTo(email)).map((mail) => mail.subject), { timeout: 30_000 }).toContain('Your receipt from Harbor Tools');
    const [receipt] = await mailsTo(email);
    expect(receipt!.body).toContain('Thank you for your order of Harbor Cloud.');
    expect(receipt!.body).toContain('Paid: $9.00');
    expect(receipt!.body).toContain(`${daemon.baseUrl}${base()}`);

    const advanced = await v1Request(daemon.url, owner.token, 'POST', `/organizations/${organizationId}/clock/advance`, { by: '+1month' });
    expect(advanced.status).toBe(200);
    await expect.poll(async () => (await mailsTo(email)).map((mail) => mail.subject), { timeout: 30_000 }).toContain('Your Harbor Cloud subscription was renewed');

    const token = (await seller.customerSessions.create({ customerId })).token;
    await polarSdk(daemon.url, '').customerPortal.subscriptions.cancel({ customerSession: token }, { id: subscriptionId });
    await expect.poll(async () => (await mailsTo(email)).map((mail) => mail.subject), { timeout: 30_000 }).toContain('Your Harbor Cloud subscription is canceled');
    const canceled = (await mailsTo(email)).find((mail) => mail.subject === 'Your Harbor Cloud subscription is canceled')!;
    expect(canceled.body).toMatch(/You keep access until \d{4}-\d\d-\d\d; nothing more will be charged\./);

    // Each event is mailed once: the passes that ran meanwhile sent nothing again.
    const subjects = (await mailsTo(email)).map((mail) => mail.subject).sort();
    expect(subjects).toEqual(['Your Harbor Cloud subscription is canceled', 'Your Harbor Cloud subscription was renewed', 'Your receipt from Harbor Tools']);
    // A month's renewals of every subscription of the organization run here: on a busy machine, more than the default.
  }, 120_000);
});
