import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPayLinkToken } from '../core/billing/pay-links/mail.js';
import { fromDbBool, fromDbInt } from '../core/db/columns.js';
import type { Database } from '../core/db/database.js';
import { startStripeFake, type StripeFake } from '../core/payments/stripe/fake.js';
import { createTestDatabase, type TestDatabase } from '../core/testing/database.js';
import { metricsRollupRows, rebuiltMetricsRollupRows } from '../core/testing/metrics-rollups.js';
import { STRIPE_WEBHOOK_PATH } from './routes/stripe-webhook.js';
import { signUp } from './testing/auth-client.js';
import { createOrganization, v1Json, v1Request } from './testing/v1.js';
import { waitFor } from './testing/poll.js';
import { buildTilld, freePort, spawnTilld, type SpawnedDaemon } from './webhooks/spawn.js';

// Issue 16, "Crash safety, measured": tilld runs as a real process with a processor that answers slowly, and is
// killed with SIGKILL while a stream of checkout confirmations, renewals (test clock), invoiced plan changes,
// refunds and payments of declined renewals on their mailed pay links is under way. Every kill lands while a
// processor call is in flight: the test watches the processor's books until the round's first call is recorded there
// (its effect made, its answer not yet back), then kills.
// After the last restart and the settle jobs, the processor's books and Till's rows must agree.
//
// Two processors: the sandbox (its books are the sandbox_* tables, written outside tilld's transactions like a real
// processor's), on a SQLite file or on PostgreSQL when TILL_TEST_DATABASE_URL is set; and the Stripe fake, running
// in this test process (it outlives every kill), with tilld pointed at it by TILL_STRIPE_API_BASE.

const KILLS = 22;
/** The sandbox waits this long before and after it records a call; the fake, after a call took effect. */
const DELAY_MS = 150;

let bin: string;
let daemon: SpawnedDaemon | undefined;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  bin = await buildTilld();
}, 180_000);
afterAll(async () => {
  await daemon?.kill();
  for (const cleanup of cleanups.reverse()) await cleanup();
  if (bin) rmSync(dirname(dirname(bin)), { recursive: true, force: true });
});

const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

/** A charge in the processor's books, by Till's payment id. `status` is Till's name for the processor's state. */
interface Charge {
  id: string;
  paymentId: string;
  status: string;
  amount: number;
}
/** A refund in the processor's books: `refundId` is Till's refund id, or `give_back_<payment id>`. */
interface BookRefund {
  id: string;
  refundId: string;
  amount: number;
  status: string;
}

/** What the crash run needs of a processor. */
interface Processor {
  /** Extra environment of tilld, and its port when the processor must know it beforehand (webhooks). */
  env: Record<string, string>;
  port?: number;
  /** Whether the organization is a sandbox one (the sandbox processor, a test clock to advance). */
  sandbox: boolean;
  /** A confirmation token for a one-time purchase, and for a subscription (charged again off-session). */
  oneTimeToken(): Promise<string>;
  subscriptionToken(): Promise<string>;
  /** With a test clock: a subscription's token that pays now and declines every renewal (its customer gets a pay link). */
  decliningToken?: string;
  /** How many charges and refunds the processor has made so far, and how many more a round waits for before the kill. */
  calls(): Promise<number>;
  killAfterCalls: number;
  books(): Promise<{ charges: Charge[]; refunds: BookRefund[] }>;
}

async function database(): Promise<TestDatabase> {
  const created = await createTestDatabase({ migrated: true });
  cleanups.push(() => created.destroy().catch(() => undefined));
  return created;
}

/**
 * Runs the stream of payments with KILLS kills mid-call against `processor`, then restarts tilld, waits for every
 * payment, refund and checkout to settle, and answers what disagrees between the processor's books and Till's rows
 * (empty when nothing does), with a report of what happened.
 */
async function crashRun(test: TestDatabase, processor: Processor): Promise<{ problems: string[]; report: Record<string, number> }> {
  const { db } = test;
  const dataDir = mkdtempSync(join(tmpdir(), 'till-payments-crash-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = processor.port ?? (await freePort());
  const env = {
    TILL_DATA_DIR: dataDir,
    TILL_DATABASE_URL: test.config.client === 'postgres' ? test.config.connectionString : test.config.filename,
    TILL_SECRET: 'payments-crash-secret-payments-crash-0123',
    TILL_JOB_INTERVAL_MS: '200',
    ...processor.env,
  };
  const start = () => spawnTilld(bin, env, { port, timeoutMs: 120_000 });

  daemon = await start();
  const owner = await signUp(daemon.url, { name: 'Cass Crash' });
  const organizationId = await createOrganization(owner, 'Crash Payments');
  const api = (method: string, path: string, body?: unknown) => v1Json(daemon!.url, owner.token, method, path, body);
  if (processor.sandbox) await api('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
  const item = await api('POST', '/products/', { organization_id: organizationId, name: 'Print', prices: [{ amount_type: 'fixed', price_amount: 2000 }] });
  const basic = await api('POST', '/products/', { organization_id: organizationId, name: 'Basic', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1000 }] });
  const pro = await api('POST', '/products/', { organization_id: organizationId, name: 'Pro', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 3000 }] });
  const discount = await api('POST', '/discounts/', { organization_id: organizationId, name: 'Crash ten', code: 'CRASH10', type: 'percentage', basis_points: 1000, duration: 'once', max_redemptions: 1000 });

  let n = 0;
  /** Creates a checkout (before the round's kill window) and answers the confirmation to send. */
  const prepareCheckout = async (productId: string, token: string, withDiscount: boolean) => {
    const checkout = await api('POST', '/checkouts/', { products: [productId] });
    const body = { confirmation_token_id: token, customer_email: `crash${n++}@example.com`, customer_billing_address: { country: 'US' }, ...(withDiscount ? { discount_code: 'CRASH10' } : {}) };
    return () => v1Request(daemon!.url, undefined, 'POST', `/checkouts/client/${checkout.client_secret}/confirm`, body).then((res) => res.text());
  };
  /**
   * The pay links mailed for declined renewals whose order is still owed (the subscription past due for it), as the
   * customers find them in their mail: the page's path. Only the sandbox renews (a test clock), so only it mails them.
   */
  const owedPayLinks = async (): Promise<string[]> => {
    const mails = await db('mail_outbox').where('to_address', 'like', 'crash%@example.com').select('body');
    const tokens = mails.flatMap((mail) => [...String(mail.body).matchAll(/\/pay\/(till_pay_[A-Za-z0-9_-]+)/g)].map((match) => match[1]!));
    if (!tokens.length) return [];
    const byHash = new Map(tokens.map((token) => [hashPayLinkToken(token), token]));
    const owed = await db('pay_links as l')
      .join('orders as o', 'o.id', 'l.order_id')
      .join('subscriptions as s', 's.id', 'l.subscription_id')
      .where('l.organization_id', organizationId)
      .whereIn('l.token_hash', [...byHash.keys()])
      .where('o.status', 'pending')
      .where('s.status', 'past_due')
      .whereRaw('s.dunning_order_id = l.order_id')
      .select('l.token_hash');
    return owed.map((row) => `/pay/${byHash.get(String(row.token_hash))}`);
  };
  /** Pays a link's page with a card, as the customer's browser posts its form. */
  const payOnPage = (path: string, cardNumber: string) =>
    fetch(`${daemon!.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: daemon!.url },
      body: new URLSearchParams({ intent: 'pay', card_number: cardNumber, card_expiry: '12 / 34', card_cvc: '123' }),
    }).then((res) => res.text());

  /** Charges the processor made whose payment is still `created`: their answers were lost (the settle jobs' work). */
  const lostAnswers = new Set<string>();
  /** Of those, the charges of pay-link payments (a customer's page post cut off after its charge). */
  const lostPayLinkAnswers = new Set<string>();
  const noteLostAnswers = async () => {
    const waiting = await db('payments').where({ organization_id: organizationId, status: 'created' }).select('id', 'purpose');
    const purposeOf = new Map(waiting.map((row) => [String(row.id), String(row.purpose)]));
    for (const charge of (await processor.books()).charges) {
      if (!purposeOf.has(charge.paymentId)) continue;
      lostAnswers.add(charge.id);
      if (purposeOf.get(charge.paymentId) === 'pay_link') lostPayLinkAnswers.add(charge.id);
    }
  };

  // Subscribers whose renewals decline, before the first kill: their customers are mailed pay links that the stream
  // pays (more such subscriptions join in the stream).
  // Their first renewals decline now, so the stream has pay links to pay from its first rounds on: left to the
  // stream's own renewal rounds, a run whose kills cut those off ended without a pay-link payment (a CI run, 2026-11-27).
  if (processor.decliningToken) {
    for (let i = 0; i < 8; i++) await (await prepareCheckout(basic.id, processor.decliningToken, false))();
    await api('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1month' });
    await waitFor('the pay links of the declined renewals', async () => (await owedPayLinks()).length > 0, 60_000);
  }

  let kills = 0;
  for (let round = 0; kills < KILLS; round++) {
    if (round > KILLS * 3) throw new Error(`only ${kills} of ${round} rounds had a processor call in flight to kill`);
    daemon ??= await start();
    // The round's work, set up while nothing is in flight.
    const confirms = [
      await prepareCheckout(item.id, await processor.oneTimeToken(), round % 2 === 0),
      await prepareCheckout(item.id, await processor.oneTimeToken(), round % 3 === 0),
      await prepareCheckout(round % 2 ? basic.id : pro.id, (round % 2 === 1 && processor.decliningToken) || (await processor.subscriptionToken()), round % 4 === 1),
    ];
    const paidOrders = await db('orders').where({ organization_id: organizationId }).whereIn('status', ['paid', 'partially_refunded']).where('total_amount', '>', 0);
    const refundable = paidOrders.map((o) => ({ id: String(o.id), left: fromDbInt(o.net_amount) - fromDbInt(o.refunded_amount) })).filter((o) => o.left > 1);
    const subscriptions = await db('subscriptions').where({ organization_id: organizationId, status: 'active' }).whereNull('dunning_order_id');
    const renewals = processor.sandbox && round % 3 === 2;
    const links = renewals ? [] : await owedPayLinks();
    const payLinks = [...new Set([pick(links), pick(links)].filter((path): path is string => path !== undefined))];
    if (renewals) {
      // What earlier kills left is settled first (within two hours on the clock), so the kill lands on a renewal's charge.
      await api('POST', `/organizations/${organizationId}/clock/advance`, { by: '+2h' });
      await waitFor('what the earlier kills left to settle', async () => {
        const [payments] = await db('payments').where({ organization_id: organizationId, status: 'created' }).count({ n: '*' });
        const [refunds] = await db('refunds').where({ organization_id: organizationId, status: 'pending' }).whereNull('processor_refund_id').count({ n: '*' });
        return Number(payments.n) + Number(refunds.n) === 0;
      }, 60_000);
    }
    const before = await processor.calls();

    const work: Promise<unknown>[] = [];
    // Customers pay declined renewals on their mailed links' pages (on-session). Every third round pays up to two
    // links alone, so that its kill lands on a pay-link charge; the others pay one beside the rest of the stream,
    // sometimes with a card that declines there.
    const payLinkRound = payLinks.length > 0 && round % 3 === 1;
    const linkPayments = payLinkRound
      ? payLinks.map((path) => () => payOnPage(path, '4242424242424242'))
      : payLinks.slice(0, 1).map((path) => () => payOnPage(path, pick(['4242424242424242', '4242424242424242', '4000000000000002'])!));
    if (payLinkRound) {
      work.push(...linkPayments.map((pay) => pay()));
    } else if (renewals) {
      // A month on the test clock: the renewals due charge off-session, one after another, until the kill.
      work.push(api('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1month' }));
    } else {
      // The stream: nothing waits for an answer before the next request goes; the kill cuts most of them off.
      work.push(...confirms.map((confirm) => confirm()));
      const refund = pick(refundable);
      if (refund) work.push(api('POST', '/refunds/', { order_id: refund.id, amount: round % 2 ? refund.left : Math.ceil(refund.left / 2), reason: 'customer_request' }));
      for (const s of new Set([pick(subscriptions), pick(subscriptions)])) {
        if (s) work.push(api('PATCH', `/subscriptions/${s.id}`, { product_id: s.product_id === basic.id ? pro.id : basic.id, proration_behavior: 'invoice' }));
      }
      work.push(...linkPayments.map((pay) => pay()));
    }
    const settled = Promise.allSettled(work);

    // Kill while a processor call is in flight: its effect is in the processor's books, its answer not yet back.
    const inFlight = await waitFor('a processor call', async () => (await processor.calls()) >= before + processor.killAfterCalls, 30_000).then(
      () => true,
      () => false,
    );
    if (inFlight) {
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * (DELAY_MS / 3))));
      await daemon.kill();
      daemon = undefined;
      kills++;
      await noteLostAnswers();
    }
    await settled;
  }

  // The last restart. The settle jobs run: on SQLite at once (tilld settles what its killed run left unanswered as
  // it starts), on PostgreSQL when they are due (a minute after the intent, five after a refund, on the organization's
  // clock, which the test moves on).
  daemon = await start();
  const unfinished = async () => {
    const [payments] = await db('payments').where({ organization_id: organizationId }).whereIn('status', ['created', 'requires_action', 'processing']).count({ n: '*' });
    const [refunds] = await db('refunds').where({ organization_id: organizationId, status: 'pending' }).count({ n: '*' });
    const [checkouts] = await db('checkouts').where({ organization_id: organizationId, status: 'confirmed' }).count({ n: '*' });
    return Number(payments.n) + Number(refunds.n) + Number(checkouts.n);
  };
  await waitFor(
    'every payment, refund and checkout to settle',
    async () => {
      if ((await unfinished()) === 0) return true;
      if (processor.sandbox) await api('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1h' });
      else if (test.config.client === 'postgres') {
        // No test clock to move: the settle jobs (a minute after an intent, five after a refund) are brought due
        // now, as the passing of those minutes would; what they then do is the daemon's own work.
        await db('jobs').where({ organization_id: organizationId }).whereIn('kind', ['payment.settle', 'refund.settle']).where('run_at_ms', '>', Date.now()).update({ run_at_ms: Date.now() });
      }
      return (await unfinished()) === 0;
    },
    90_000,
    async () => ({
      payments: await db('payments').where({ organization_id: organizationId }).whereIn('status', ['created', 'requires_action', 'processing']).select('id', 'status', 'purpose', 'created_at'),
      refunds: await db('refunds').where({ organization_id: organizationId, status: 'pending' }).select('id', 'created_at'),
      checkouts: await db('checkouts').where({ organization_id: organizationId, status: 'confirmed' }).select('id', 'payment_id', 'modified_at'),
      jobs: await db('jobs').where({ organization_id: organizationId }).whereNot('kind', 'like', 'subscription.%').select('kind', 'subject_id', 'run_at_ms', 'locked_until_ms', 'attempts', 'last_error'),
      now: Date.now(),
    }),
  );

  const { charges, refunds: bookRefunds } = await processor.books();
  const payments = await db('payments').where({ organization_id: organizationId });
  const orders = await db('orders').where({ organization_id: organizationId });
  const refunds = await db('refunds').where({ organization_id: organizationId });
  const checkouts = await db('checkouts').where({ organization_id: organizationId });
  const paymentById = new Map(payments.map((p) => [String(p.id), p]));
  const givenBack = new Set(bookRefunds.filter((r) => r.refundId.startsWith('give_back_')).map((r) => r.refundId.slice('give_back_'.length)));
  const problems: string[] = [];

  // Every charge at the processor: exactly one payment, settled as the processor says, and its one order (or, for a
  // payment whose purpose went away meanwhile, the whole amount given back).
  for (const charge of charges) {
    const payment = paymentById.get(charge.paymentId);
    if (!payment) {
      problems.push(`charge ${charge.id} (${charge.status}) has no payment ${charge.paymentId}`);
      continue;
    }
    if (payment.status !== charge.status) problems.push(`payment ${payment.id} is ${payment.status}, its charge ${charge.id} ${charge.status}`);
    if (charge.amount !== fromDbInt(payment.amount)) problems.push(`charge ${charge.id} is of ${charge.amount}, payment ${payment.id} of ${payment.amount}`);
    if (charge.status !== 'succeeded') continue;
    if (payment.processor_payment_id !== charge.id) problems.push(`payment ${payment.id} names ${payment.processor_payment_id}, not ${charge.id}`);
    const paid = orders.filter((o) => o.payment_id === payment.id);
    if (givenBack.has(String(payment.id))) {
      if (paid.length) problems.push(`payment ${payment.id} was given back but has ${paid.length} order(s)`);
    } else if (paid.length !== 1) problems.push(`charge ${charge.id} (payment ${payment.id}, ${payment.purpose}) has ${paid.length} orders`);
  }
  // Nothing charged twice for one intent (or one checkout), nothing paid that the processor did not charge.
  const perPayment = new Map<string, number>();
  for (const charge of charges) perPayment.set(charge.paymentId, (perPayment.get(charge.paymentId) ?? 0) + 1);
  for (const [paymentId, count] of perPayment) if (count > 1) problems.push(`payment ${paymentId} has ${count} charges at the processor`);
  const perCheckout = new Map<string, number>();
  for (const charge of charges.filter((c) => c.status === 'succeeded')) {
    const checkoutId = paymentById.get(charge.paymentId)?.checkout_id;
    if (checkoutId) perCheckout.set(String(checkoutId), (perCheckout.get(String(checkoutId)) ?? 0) + 1);
  }
  for (const [checkoutId, count] of perCheckout) if (count > 1) problems.push(`checkout ${checkoutId} was charged ${count} times`);
  for (const payment of payments) {
    if (payment.status === 'succeeded' && !charges.some((c) => c.paymentId === payment.id && c.status === 'succeeded')) problems.push(`payment ${payment.id} succeeded without a charge`);
  }
  for (const order of orders) {
    if (fromDbInt(order.total_amount) > 0 && order.status !== 'pending') {
      const payment = order.payment_id ? paymentById.get(String(order.payment_id)) : undefined;
      if (payment?.status !== 'succeeded') problems.push(`order ${order.id} (${order.status}) has no succeeded payment`);
    }
  }

  // A subscription never waits for an order that was paid (by its link, or a dunning retry): it is active again.
  const subscriptionRows = await db('subscriptions').where({ organization_id: organizationId });
  for (const s of subscriptionRows) {
    const owed = s.dunning_order_id ? orders.find((o) => o.id === s.dunning_order_id) : undefined;
    if (owed && owed.status !== 'pending') problems.push(`subscription ${s.id} (${s.status}) still waits for order ${owed.id}, which is ${owed.status}`);
  }

  // Every refund at the processor has its refund row, agreeing on the amount and the outcome; and the reverse.
  for (const r of bookRefunds) {
    if (r.refundId.startsWith('give_back_')) continue;
    const row = refunds.find((x) => x.id === r.refundId);
    if (!row) {
      problems.push(`processor refund ${r.id} has no refund row ${r.refundId}`);
      continue;
    }
    if (fromDbInt(row.amount) + fromDbInt(row.tax_amount) !== r.amount) problems.push(`refund ${row.id} is ${row.amount}+${row.tax_amount}, the processor refunded ${r.amount}`);
    if (row.status !== r.status) problems.push(`refund ${row.id} is ${row.status}, at the processor ${r.status}`);
  }
  for (const row of refunds) {
    const atProcessor = bookRefunds.find((r) => r.refundId === row.id);
    if (row.status === 'succeeded' && atProcessor?.status !== 'succeeded') problems.push(`refund ${row.id} succeeded without a processor refund`);
  }
  // Each order's refunded amount is what its succeeded refunds returned.
  for (const order of orders) {
    const returned = refunds.filter((r) => r.order_id === order.id && r.status === 'succeeded').reduce((sum, r) => sum + fromDbInt(r.amount), 0);
    if (returned !== fromDbInt(order.refunded_amount)) problems.push(`order ${order.id} says ${order.refunded_amount} refunded, its refunds ${returned}`);
  }

  // No checkout left confirmed; the discount's redemptions are exactly the paid checkouts that used it.
  for (const checkout of checkouts) {
    if (checkout.status === 'confirmed') problems.push(`checkout ${checkout.id} is still confirmed`);
    if (checkout.status === 'succeeded' && checkout.discount_id && !fromDbBool(checkout.discount_claimed)) problems.push(`checkout ${checkout.id} succeeded without its redemption`);
    if (checkout.status !== 'succeeded' && fromDbBool(checkout.discount_claimed)) problems.push(`checkout ${checkout.id} is ${checkout.status} and holds a redemption`);
  }
  const redeemed = checkouts.filter((c) => c.discount_id === discount.id && c.status === 'succeeded').length;
  const row = await db('discounts').where({ id: discount.id }).first();
  if (fromDbInt(row.redemptions_count) !== redeemed) problems.push(`discount says ${row.redemptions_count} redemptions, ${redeemed} paid checkouts used it`);

  await daemon.stop();
  daemon = undefined;

  // The metrics rollups are written in the transaction of the change they follow: after the kills they hold exactly
  // what a rebuild from the rows holds.
  const kept = await metricsRollupRows(db, organizationId);
  const rebuilt = await rebuiltMetricsRollupRows(db, organizationId);
  for (const table of Object.keys(rebuilt)) {
    const [mine, theirs] = [new Set(kept[table]), new Set(rebuilt[table])];
    for (const row of kept[table]!.filter((r) => !theirs.has(r)).slice(0, 5)) problems.push(`${table} holds ${row}, a rebuild does not`);
    for (const row of rebuilt[table]!.filter((r) => !mine.has(r)).slice(0, 5)) problems.push(`a rebuild of ${table} holds ${row}, the kept rollups do not`);
  }
  const report = {
    kills,
    lostAnswers: lostAnswers.size,
    lostPayLinkAnswers: lostPayLinkAnswers.size,
    charges: charges.length,
    succeeded: charges.filter((c) => c.status === 'succeeded').length,
    refunds: bookRefunds.length,
    orders: orders.length,
    renewals: orders.filter((o) => o.billing_reason === 'subscription_cycle').length,
    planChanges: orders.filter((o) => o.billing_reason === 'subscription_update').length,
    payLinkCharges: payments.filter((p) => p.purpose === 'pay_link').length,
    paidByLink: payments.filter((p) => p.purpose === 'pay_link' && p.status === 'succeeded' && !givenBack.has(String(p.id))).length,
    givenBack: givenBack.size,
    metricsRollupRows: Object.values(kept).reduce((n, rows) => n + rows.length, 0),
  };
  return { problems, report };
}

const onPostgres = Boolean(process.env.TILL_TEST_DATABASE_URL);

describe(`payments under SIGKILL, ${KILLS} kills mid processor call`, () => {
  it(`through the sandbox (on ${onPostgres ? 'PostgreSQL' : 'a SQLite file'}): no charge without its payment and order, no refund without its row, no checkout left confirmed, no redemption lost or doubled`, { timeout: 600_000 }, async () => {
    const test = await database();
    const count = async (table: string) => Number((await test.db(table).count({ n: '*' }).first())!.n);
    const { problems, report } = await crashRun(test, {
      env: { TILL_SANDBOX_DELAY_MS: String(DELAY_MS) },
      sandbox: true,
      killAfterCalls: 1,
      // Mostly paid at once; some declined, processing, 3-D Secure (abandoned), refunds pending or failing late.
      oneTimeToken: async () => pick(['tok_visa', 'tok_visa', 'tok_visa', 'tok_mastercard', 'tok_chargeDeclined', 'tok_sandboxProcessing', 'tok_threeDSecure2Required', 'tok_refundPending', 'tok_refundFailsLate'])!,
      // Renewals and plan changes charge these off-session; some decline there (dunning).
      subscriptionToken: async () => pick(['tok_visa', 'tok_visa', 'tok_visa', 'tok_chargeCustomerFail', 'tok_sandboxProcessingThenFailed'])!,
      decliningToken: 'tok_chargeCustomerFail',
      calls: async () => (await count('sandbox_intents')) + (await count('sandbox_refunds')),
      books: async () => ({
        charges: (await test.db('sandbox_intents')).map((i) => ({ id: String(i.id), paymentId: String(i.payment_id), status: String(i.status), amount: fromDbInt(i.amount) })),
        refunds: (await test.db('sandbox_refunds')).map((r) => ({
          id: String(r.id),
          refundId: String(r.idempotency_key).replace(/^till_give_back_/, 'give_back_'),
          amount: fromDbInt(r.amount),
          status: String(r.status),
        })),
      }),
    });
    console.log(`payments crash (sandbox, ${test.config.client}): ${JSON.stringify(report)}`);
    expect(problems).toEqual([]);
    expect(report.succeeded).toBeGreaterThan(KILLS);
    expect(report.metricsRollupRows).toBeGreaterThan(0);
    expect(report.renewals).toBeGreaterThan(0);
    // The stream paid pay links (how many were paid, and how many of their answers a kill cut off, is reported: a
    // kill lands on a pay-link charge in most runs, not every one).
    expect(report.payLinkCharges).toBeGreaterThan(0);
    // The kills did cut answers off: charges made at the processor and not yet known to Till, until the settle jobs.
    expect(report.lostAnswers).toBeGreaterThan(0);
  });

  // The fake lives in this process and outlives every kill. A Stripe organization has no test clock, so its settle
  // jobs come due in real time (a minute, five for a refund): on SQLite tilld owns its database and settles what its
  // killed run left as it starts; on PostgreSQL (daemons may share it) the test brings those jobs due at the end.
  it(`through the Stripe fake (on ${onPostgres ? 'PostgreSQL' : 'a SQLite file'}; no renewals: a Stripe organization has no test clock)`, { timeout: 600_000 }, async () => {
    const test = await database();
    const fake: StripeFake = await startStripeFake({ answerDelayMs: DELAY_MS });
    cleanups.push(() => fake.close());
    const stripe = new Stripe(fake.secretKey, { ...fake.clientOptions, maxNetworkRetries: 0 });
    const token = async (method: string) => (await stripe.testHelpers.confirmationTokens.create({ payment_method: method })).id;
    const port = await freePort();
    fake.setWebhookUrl(`http://127.0.0.1:${port}${STRIPE_WEBHOOK_PATH}`);
    const charges = (): Charge[] =>
      [...fake.state.paymentIntents.values()].map((pi) => ({
        id: pi.id,
        paymentId: pi.metadata.till_payment_id ?? '',
        status: pi.status === 'requires_payment_method' || pi.status === 'canceled' ? 'failed' : pi.status,
        amount: pi.amount,
      }));
    const { problems, report } = await crashRun(test, {
      port,
      env: {
        TILL_STRIPE_SECRET_KEY: fake.secretKey,
        TILL_STRIPE_PUBLISHABLE_KEY: fake.publishableKey,
        TILL_STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
        TILL_STRIPE_API_BASE: fake.url,
      },
      sandbox: false,
      // A confirmation makes several calls before its charge (customer, method): wait for a second charge or refund.
      killAfterCalls: 2,
      oneTimeToken: () => token(pick(['pm_card_visa', 'pm_card_visa', 'pm_card_mastercard', 'pm_card_chargeDeclined'])!),
      subscriptionToken: () => token(pick(['pm_card_visa', 'pm_card_visa', 'pm_card_chargeCustomerFail'])!),
      calls: async () => fake.state.paymentIntents.size + fake.state.refunds.size,
      books: async () => ({
        charges: charges(),
        refunds: [...fake.state.refunds.values()].map((r) => ({ id: r.id, refundId: r.metadata.till_refund_id ?? '', amount: r.amount, status: r.status })),
      }),
    });
    console.log(`payments crash (Stripe fake, ${test.config.client}): ${JSON.stringify(report)}`);
    expect(problems).toEqual([]);
    // A confirmation is cut off more often before its charge than with the sandbox: its calls before the charge are slow too.
    expect(report.succeeded).toBeGreaterThan(KILLS / 2);
    expect(report.metricsRollupRows).toBeGreaterThan(0);
    expect(report.lostAnswers).toBeGreaterThan(0);
  });
});
