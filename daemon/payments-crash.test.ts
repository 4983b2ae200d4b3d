import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromDbBool, fromDbInt } from '../core/db/columns.js';
import type { Database } from '../core/db/database.js';
import { createTestDatabase, type TestDatabase } from '../core/testing/database.js';
import { signUp, type SignedIn } from './testing/auth-client.js';
import { createOrganization, v1Request } from './testing/v1.js';
import { buildTilld, freePort, spawnTilld, type SpawnedDaemon } from './webhooks/spawn.js';

// Issue 16, "Crash safety, measured": tilld runs as a real process (on a SQLite file, or on PostgreSQL when
// TILL_TEST_DATABASE_URL is set) with the sandbox processor answering slowly, and is killed with SIGKILL while a
// stream of checkout confirmations, renewals (test clock), invoiced plan changes and refunds is under way. Every
// kill lands while a processor call is in flight: the test polls the sandbox's books (sandbox_intents,
// sandbox_refunds: written outside tilld's transactions, like a real processor's) until the round's first call is
// recorded there, then kills. After the last restart and the settle jobs, the books and Till's rows must agree.

const KILLS = 22;
/** Each sandbox call waits this long before and after it is recorded: the kill lands inside the second wait. */
const SANDBOX_DELAY_MS = 150;

let database: TestDatabase;
let db: Database;
let bin: string;
let dataDir: string;
let port: number;
let env: Record<string, string>;
let daemon: SpawnedDaemon | undefined;

beforeAll(async () => {
  database = await createTestDatabase({ migrated: true });
  db = database.db;
  dataDir = mkdtempSync(join(tmpdir(), 'till-payments-crash-'));
  port = await freePort();
  const url = database.config.client === 'postgres' ? database.config.connectionString : database.config.filename;
  env = {
    TILL_DATA_DIR: dataDir,
    TILL_DATABASE_URL: url,
    TILL_SECRET: 'payments-crash-secret-payments-crash-0123',
    TILL_SANDBOX_DELAY_MS: String(SANDBOX_DELAY_MS),
    TILL_JOB_INTERVAL_MS: '200',
  };
  bin = await buildTilld();
}, 180_000);
afterAll(async () => {
  await daemon?.kill();
  await database?.destroy().catch(() => {});
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (bin) rmSync(dirname(dirname(bin)), { recursive: true, force: true });
});

const start = () => spawnTilld(bin, env, { port, timeoutMs: 120_000 });

/** Waits for `check` to hold (polling the database), or fails naming `what`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, explain?: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${explain ? `: ${JSON.stringify(await explain(), null, 1)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every call the sandbox recorded so far (intents and refunds): a new one means a processor call is in flight. */
const ledgerCalls = async () => {
  const [intents] = await db('sandbox_intents').count({ n: '*' });
  const [refunds] = await db('sandbox_refunds').count({ n: '*' });
  return Number(intents.n) + Number(refunds.n);
};

const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

/** Cards for one-time purchases: mostly paid at once, some declined, processing, 3-D Secure, refunds pending or failing late. */
const ONE_TIME_TOKENS = ['tok_visa', 'tok_visa', 'tok_visa', 'tok_mastercard', 'tok_chargeDeclined', 'tok_sandboxProcessing', 'tok_threeDSecure2Required', 'tok_refundPending', 'tok_refundFailsLate'];
/** Cards for subscriptions: renewals and plan changes charge them off-session; one in a few declines there (dunning). */
const SUBSCRIPTION_TOKENS = ['tok_visa', 'tok_visa', 'tok_visa', 'tok_chargeCustomerFail', 'tok_sandboxProcessingThenFailed'];

describe(`payments under SIGKILL (${process.env.TILL_TEST_DATABASE_URL ? 'PostgreSQL' : 'a SQLite file'}, sandbox answering in ${SANDBOX_DELAY_MS} ms)`, () => {
  it(`leaves no charge without its payment and order, no refund without its row, no checkout confirmed and no redemption lost or doubled, across ${KILLS} kills mid-call`, { timeout: 600_000 }, async () => {
    daemon = await start();
    const owner: SignedIn = await signUp(daemon.url, { name: 'Cass Crash' });
    const organizationId = await createOrganization(owner, 'Crash Payments');
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await v1Request(daemon!.url, owner.token, method, path, body);
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    await api('PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
    const item = await api('POST', '/products/', { organization_id: organizationId, name: 'Print', prices: [{ amount_type: 'fixed', price_amount: 2000 }] });
    const basic = await api('POST', '/products/', { organization_id: organizationId, name: 'Basic', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 1000 }] });
    const pro = await api('POST', '/products/', { organization_id: organizationId, name: 'Pro', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 3000 }] });
    const discount = await api('POST', '/discounts/', { organization_id: organizationId, name: 'Crash ten', code: 'CRASH10', type: 'percentage', basis_points: 1000, duration: 'once', max_redemptions: 1000 });

    let n = 0;
    /** Creates a checkout (before the round's kill window) and answers the confirmation to send. */
    const prepareCheckout = async (productId: string, token: string, withDiscount: boolean) => {
      const checkout = await api('POST', '/checkouts/', { products: [productId] });
      const email = `crash${n++}@example.com`;
      const body = { confirmation_token_id: token, customer_email: email, customer_billing_address: { country: 'DE' }, ...(withDiscount ? { discount_code: 'CRASH10' } : {}) };
      return () => v1Request(daemon!.url, undefined, 'POST', `/checkouts/client/${checkout.client_secret}/confirm`, body).then((res) => res.text());
    };

    let kills = 0;
    const lostAnswers = new Set<string>();
    for (let round = 0; kills < KILLS; round++) {
      if (round > KILLS * 3) throw new Error(`only ${kills} of ${round} rounds had a processor call in flight to kill`);
      daemon ??= await start();
      // The round's work, set up while nothing is in flight.
      const confirms = [
        await prepareCheckout(item.id, pick(ONE_TIME_TOKENS)!, round % 2 === 0),
        await prepareCheckout(item.id, pick(ONE_TIME_TOKENS)!, round % 3 === 0),
        await prepareCheckout(round % 2 ? basic.id : pro.id, pick(SUBSCRIPTION_TOKENS)!, round % 4 === 1),
      ];
      const paidOrders = await db('orders').where({ organization_id: organizationId }).whereIn('status', ['paid', 'partially_refunded']).where('total_amount', '>', 0);
      const refundable = paidOrders.map((o) => ({ id: String(o.id), left: fromDbInt(o.net_amount) - fromDbInt(o.refunded_amount) })).filter((o) => o.left > 1);
      const subscriptions = await db('subscriptions').where({ organization_id: organizationId, status: 'active' }).whereNull('dunning_order_id');
      const before = await ledgerCalls();

      // The stream: answers are not awaited one by one; the kill cuts most of them off.
      const work: Promise<unknown>[] = confirms.map((confirm) => confirm());
      const refund = pick(refundable);
      if (refund) work.push(api('POST', '/refunds/', { order_id: refund.id, amount: round % 2 ? refund.left : Math.ceil(refund.left / 2), reason: 'customer_request' }));
      for (const s of [pick(subscriptions), pick(subscriptions)]) {
        if (s) work.push(api('PATCH', `/subscriptions/${s.id}`, { product_id: s.product_id === basic.id ? pro.id : basic.id, proration_behavior: 'invoice' }));
      }
      if (round % 2 === 1) work.push(api('POST', `/organizations/${organizationId}/clock/advance`, { by: '+9d' }));
      const settled = Promise.allSettled(work);

      // Kill while a processor call is in flight: its record is at the sandbox, its answer not yet back.
      const inFlight = await until('a processor call', async () => (await ledgerCalls()) > before, 30_000).then(
        () => true,
        () => false,
      );
      if (inFlight) {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * (SANDBOX_DELAY_MS / 3))));
        await daemon.kill();
        daemon = undefined;
        kills++;
        // What the kill left: charges the processor made whose answer never reached Till (the settle jobs' work).
        const orphans = await db('sandbox_intents').join('payments', 'payments.id', 'sandbox_intents.payment_id').where('payments.status', 'created').select('sandbox_intents.id');
        for (const orphan of orphans) lostAnswers.add(String(orphan.id));
      }
      await settled;
    }

    // The last restart: the settle jobs (due a minute after their intent on the organization's clock, refunds after
    // five) run when the clock moves on; the daemon's own runner runs what is due meanwhile.
    daemon = await start();
    const unfinished = async () => {
      const [payments] = await db('payments').where({ organization_id: organizationId }).whereIn('status', ['created', 'requires_action', 'processing']).count({ n: '*' });
      const [refunds] = await db('refunds').where({ organization_id: organizationId, status: 'pending' }).count({ n: '*' });
      const [checkouts] = await db('checkouts').where({ organization_id: organizationId, status: 'confirmed' }).count({ n: '*' });
      return Number(payments.n) + Number(refunds.n) + Number(checkouts.n);
    };
    await until(
      'every payment, refund and checkout to settle',
      async () => {
        if ((await unfinished()) === 0) return true;
        await api('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1h' });
        return (await unfinished()) === 0;
      },
      90_000,
      async () => ({
        payments: await db('payments').where({ organization_id: organizationId }).whereIn('status', ['created', 'requires_action', 'processing']).select('id', 'status', 'purpose', 'created_at'),
        refunds: await db('refunds').where({ organization_id: organizationId, status: 'pending' }).select('id', 'created_at'),
        checkouts: await db('checkouts').where({ organization_id: organizationId, status: 'confirmed' }).select('id', 'payment_id', 'modified_at'),
        jobs: await db('jobs').where({ organization_id: organizationId }).whereNot('kind', 'like', 'subscription.%').select('kind', 'subject_id', 'run_at_ms', 'locked_until_ms', 'attempts', 'last_error'),
        clock: await db('organization_clocks').where({ organization_id: organizationId }).first(),
        now: Date.now(),
      }),
    );

    const intents = await db('sandbox_intents');
    const ledgerRefunds = await db('sandbox_refunds');
    const payments = await db('payments').where({ organization_id: organizationId });
    const orders = await db('orders').where({ organization_id: organizationId });
    const refunds = await db('refunds').where({ organization_id: organizationId });
    const checkouts = await db('checkouts').where({ organization_id: organizationId });
    const paymentById = new Map(payments.map((p) => [String(p.id), p]));
    const givenBack = new Set(ledgerRefunds.filter((r) => String(r.idempotency_key).startsWith('till_give_back_')).map((r) => String(r.idempotency_key).slice('till_give_back_'.length)));
    const report = { kills, lostAnswers: lostAnswers.size, intents: intents.length, succeeded: intents.filter((i) => i.status === 'succeeded').length, refunds: ledgerRefunds.length, orders: orders.length, givenBack: givenBack.size };
    console.log(`payments crash: ${JSON.stringify(report)}`);
    expect(intents.filter((i) => i.status === 'succeeded').length).toBeGreaterThan(KILLS);
    // The kills did cut answers off: charges made at the processor with no answer in Till, until the settle jobs ran.
    expect(lostAnswers.size).toBeGreaterThan(0);

    // Every charge at the processor: exactly one payment, settled as the processor says, and its one order.
    const problems: string[] = [];
    for (const intent of intents) {
      const payment = paymentById.get(String(intent.payment_id));
      if (!payment) {
        problems.push(`intent ${intent.id} (${intent.status}) has no payment ${intent.payment_id}`);
        continue;
      }
      if (payment.idempotency_key !== intent.idempotency_key) problems.push(`intent ${intent.id}: key ${intent.idempotency_key} is not payment ${payment.id}'s`);
      if (payment.status !== intent.status) problems.push(`payment ${payment.id} is ${payment.status}, its intent ${intent.status}`);
      if (intent.status !== 'succeeded') continue;
      if (payment.processor_payment_id !== intent.id) problems.push(`payment ${payment.id} names intent ${payment.processor_payment_id}, not ${intent.id}`);
      const paid = orders.filter((o) => o.payment_id === payment.id);
      if (givenBack.has(String(payment.id))) {
        if (paid.length) problems.push(`payment ${payment.id} was given back but has ${paid.length} order(s)`);
      } else if (paid.length !== 1) problems.push(`charge ${intent.id} (payment ${payment.id}, ${payment.purpose}) has ${paid.length} orders`);
      if (fromDbInt(intent.amount) !== fromDbInt(payment.amount)) problems.push(`intent ${intent.id} charged ${intent.amount}, payment says ${payment.amount}`);
    }
    // Nothing charged twice for one intent, and nothing paid that the processor did not charge.
    const perPayment = new Map<string, number>();
    for (const intent of intents) perPayment.set(String(intent.payment_id), (perPayment.get(String(intent.payment_id)) ?? 0) + 1);
    for (const [paymentId, count] of perPayment) if (count > 1) problems.push(`payment ${paymentId} has ${count} intents at the processor`);
    for (const payment of payments) {
      if (payment.status === 'succeeded' && !intents.some((i) => i.payment_id === payment.id && i.status === 'succeeded')) problems.push(`payment ${payment.id} succeeded without a charge`);
    }
    for (const order of orders) {
      if (fromDbInt(order.total_amount) > 0 && order.status !== 'pending' && order.status !== 'void') {
        const payment = order.payment_id ? paymentById.get(String(order.payment_id)) : undefined;
        if (payment?.status !== 'succeeded') problems.push(`order ${order.id} (${order.status}) has no succeeded payment`);
      }
    }
    // One checkout, one charge at most.
    const charged = new Map<string, number>();
    for (const intent of intents.filter((i) => i.status === 'succeeded')) {
      const checkoutId = paymentById.get(String(intent.payment_id))?.checkout_id;
      if (checkoutId) charged.set(String(checkoutId), (charged.get(String(checkoutId)) ?? 0) + 1);
    }
    for (const [checkoutId, count] of charged) if (count > 1) problems.push(`checkout ${checkoutId} was charged ${count} times`);

    // Every refund at the processor has its refund row, agreeing on the amount and the outcome; and the reverse.
    for (const r of ledgerRefunds) {
      if (String(r.idempotency_key).startsWith('till_give_back_')) continue;
      const row = refunds.find((x) => x.id === r.idempotency_key);
      if (!row) {
        problems.push(`processor refund ${r.id} has no refund row ${r.idempotency_key}`);
        continue;
      }
      if (fromDbInt(row.amount) + fromDbInt(row.tax_amount) !== fromDbInt(r.amount)) problems.push(`refund ${row.id} is ${row.amount}+${row.tax_amount}, the processor refunded ${r.amount}`);
      if (row.status !== r.status) problems.push(`refund ${row.id} is ${row.status}, at the processor ${r.status}`);
    }
    for (const row of refunds) {
      const atProcessor = ledgerRefunds.find((r) => r.idempotency_key === row.id);
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
    expect(problems).toEqual([]);
  });
});
