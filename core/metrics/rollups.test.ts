import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../../daemon/testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../../daemon/testing/daemon.js';
import { seededRandom } from '../../daemon/testing/fuzz.js';
import { createOrganization, polarSdk, v1Request } from '../../daemon/testing/v1.js';
import { CHECKOUT_TABLE, ORDER_TABLE, SUBSCRIPTION_TABLE } from './rollup-rows.js';
import { metricsRollupRows, rebuiltMetricsRollupRows } from '../testing/metrics-rollups.js';
import type { MetricsRequest } from './schema.js';
import { getMetrics } from './service.js';

// A random history (purchases, trials, renewals, refunds, plan changes, cancellations, revocations, abandoned
// checkouts) made through the API on the test clock across Paris's next daylight-saving change; then every metric
// of every period read from the rollups is compared with the same metric computed from the rows.

const DAY = 86_400_000;
const HOUR = 3_600_000;
const SEED = Number(process.env.TILL_METRICS_SEED ?? 20);
const STEPS = 40;

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;
let anonymous: Polar;
let first = 0;
let last = 0;
const failures: string[] = [];

/** The start of the first day, twelve days or more from now, on which Paris changes its clocks. */
function nextParisChange(): number {
  const format = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Paris', timeZoneName: 'shortOffset' });
  const offset = (instant: number) => format.formatToParts(new Date(instant)).find((part) => part.type === 'timeZoneName')!.value;
  const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  for (let k = 12; k < 400; k++) if (offset(today + k * DAY - 12 * HOUR) !== offset(today + k * DAY + 12 * HOUR)) return today + k * DAY;
  throw new Error('no daylight-saving change within a year');
}

async function clockTo(instant: number) {
  const res = await v1Request(daemon.url, owner.token, 'POST', `/organizations/${organizationId}/clock/advance`, { to: new Date(instant).toISOString() });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Rhea Rollups' });
  organizationId = await createOrganization(owner, 'Rollup Shop');
  sdk = polarSdk(daemon.url, owner.token);
  anonymous = polarSdk(daemon.url, '');
  expect((await v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
  const product = (body: object) => sdk.products.create({ organizationId, ...body } as ProductCreate);
  const oneOff = await product({ name: 'Guide', prices: [{ amountType: 'fixed', priceAmount: 2000 }] });
  const plans = [
    await product({ name: 'Monthly', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }] }),
    await product({ name: 'Yearly', recurringInterval: 'year', prices: [{ amountType: 'fixed', priceAmount: 12000 }] }),
    await product({ name: 'Weekly', recurringInterval: 'week', prices: [{ amountType: 'fixed', priceAmount: 700 }] }),
    await product({ name: 'Trial', recurringInterval: 'month', trialInterval: 'day', trialIntervalCount: 3, prices: [{ amountType: 'fixed', priceAmount: 1500 }] }),
  ];
  const [pro, max, ultra] = [
    await product({ name: 'Pro', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 3000 }] }),
    await product({ name: 'Max', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 5000 }] }),
    await product({ name: 'Ultra', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 8000 }] }),
  ];

  const random = seededRandom(SEED);
  // Few enough customers that some buy again (one-time products) or come back after their subscription ended.
  const email = () => `customer-${random.int(24)}@example.com`;
  const subscriptions: string[] = [];
  const orders: { id: string; refundable: number }[] = [];
  const buy = async (productId: string) => {
    const checkout = await sdk.checkouts.create({ products: [productId], customerEmail: email() });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'US' } } });
    const done = await sdk.checkouts.get({ id: checkout.id });
    for (const order of (await sdk.orders.list({ checkoutId: checkout.id })).result.items) orders.push({ id: order.id, refundable: order.netAmount });
    if (done.subscriptionId) subscriptions.push(done.subscriptionId);
  };
  const upgrade = async (id: string | undefined, prorationBehavior: 'invoice' | 'prorate', to = pro) => {
    if (id) await sdk.subscriptions.update({ id, subscriptionUpdate: { productId: to.id, prorationBehavior } });
  };
  // A subscription not revoked yet (a revoked one refuses every change).
  const live = () => subscriptions[random.int(subscriptions.length)];
  const actions: (() => Promise<unknown>)[] = [
    () => buy(oneOff.id),
    () => buy(random.pick(plans).id),
    () => buy(random.pick(plans).id),
    () => sdk.checkouts.create({ products: [oneOff.id], customerEmail: email() }),
    async () => {
      const order = orders.filter((o) => o.refundable > 0);
      if (!order.length) return;
      const picked = random.pick(order);
      const amount = random.int(2) ? picked.refundable : 1 + random.int(picked.refundable);
      picked.refundable -= amount;
      await sdk.refunds.create({ orderId: picked.id, amount, reason: 'customer_request' });
    },
    () => upgrade(live(), random.pick(['invoice', 'prorate'] as const)),
    async () => {
      const reason = random.pick(['too_expensive', 'unused', 'missing_features', undefined] as const);
      const id = live();
      if (id) await sdk.subscriptions.update({ id, subscriptionUpdate: { cancelAtPeriodEnd: true, customerCancellationReason: reason } });
    },
    async () => {
      const id = live();
      if (id) await sdk.subscriptions.update({ id, subscriptionUpdate: { cancelAtPeriodEnd: false } });
    },
    async () => {
      const id = live();
      if (!id) return;
      subscriptions.splice(subscriptions.indexOf(id), 1);
      await sdk.subscriptions.revoke({ id });
    },
  ];

  let now = nextParisChange() - 8 * DAY - 1;
  first = now;
  for (let step = 0; step < STEPS; step++) {
    now += step === plans.length || step === plans.length + 2 ? HOUR : HOUR + random.int(2 * DAY);
    // Some changes fall exactly on a UTC hour or midnight: the edges of the periods and of the churn windows.
    if (random.int(3) === 0) now = Math.ceil(now / HOUR) * HOUR;
    if (random.int(5) === 0) now = Math.ceil(now / DAY) * DAY;
    await clockTo(now);
    try {
      // Every plan (the trial too) is bought once first, and the first subscription upgraded with an invoice on its
      // first day, then twice more an hour apart days later (two orders of one subscription in a period, new and
      // renewals); the rest is random.
      const opening = [
        ...plans.map((plan) => () => buy(plan.id)),
        () => upgrade(subscriptions[0], 'invoice'),
        () => upgrade(subscriptions[0], 'invoice', max),
        () => upgrade(subscriptions[0], 'invoice', ultra),
      ];
      const action = step < opening.length ? opening[step]! : random.pick(actions);
      await action();
    } catch (error) {
      failures.push(String(error).slice(0, 200));
    }
  }
  // Long enough for the monthly subscriptions to renew and the weekly ones several times.
  last = now + 40 * DAY;
  await clockTo(last);
}, 600_000);
afterAll(async () => {
  await daemon?.close();
});

const dateOf = (instant: number) => new Date(instant).toISOString().slice(0, 10);

async function compare(request: Omit<MetricsRequest, 'organizationIds'>) {
  const asked = { ...request, organizationIds: [organizationId] };
  const [rolled, raw] = [await getMetrics(daemon.db, asked), await getMetrics(daemon.db, asked, { rollups: false })];
  expect(rolled.periods.length).toBeGreaterThan(0);
  rolled.periods.forEach((period, k) => expect(period, `${request.timezone} ${request.interval} ${period.timestamp.toISOString()}`).toEqual(raw.periods[k]));
  expect(rolled.totals).toEqual(raw.totals);
  return rolled;
}

describe('metrics rollups', () => {
  it('made the random history it compares', async () => {
    const [orders, subscriptions] = [await daemon.db('orders').where({ organization_id: organizationId }).count('* as n'), await daemon.db('subscriptions').where({ organization_id: organizationId }).count('* as n')];
    expect(Number(orders[0]!.n)).toBeGreaterThan(10);
    expect(Number(subscriptions[0]!.n)).toBeGreaterThan(3);
    // Some random actions are refused (a customer subscribing twice, a subscription canceled twice): most go through.
    expect(failures.length, failures.join('\n')).toBeLessThan(STEPS / 2);
  });

  it('answers every metric of every UTC day as the rows do', async () => {
    const answer = await compare({ startDate: dateOf(first - DAY), endDate: dateOf(last), interval: 'day', timezone: 'UTC' });
    expect(answer.totals.orders).toBeGreaterThan(10);
  });

  it('answers every metric of every Paris and New York day, across the daylight-saving change, as the rows do', async () => {
    await compare({ startDate: dateOf(first - DAY), endDate: dateOf(last), interval: 'day', timezone: 'Europe/Paris' });
    await compare({ startDate: dateOf(first - DAY), endDate: dateOf(last), interval: 'day', timezone: 'America/New_York' });
  });

  it('answers every hour of a week across the change as the rows do', async () => {
    await compare({ startDate: dateOf(first + 2 * DAY), endDate: dateOf(first + 9 * DAY), interval: 'hour', timezone: 'Europe/Paris' });
  });

  it('answers a half-hour zone (Kolkata) and the other intervals from the rows, as before', async () => {
    await compare({ startDate: dateOf(first - DAY), endDate: dateOf(last), interval: 'day', timezone: 'Asia/Kolkata' });
    await compare({ startDate: dateOf(first - DAY), endDate: dateOf(last), interval: 'week', timezone: 'UTC' });
  });

  it('reads the rollups for a UTC day: without them the same request counts nothing', async () => {
    const request: MetricsRequest = { organizationIds: [organizationId], startDate: dateOf(first - DAY), endDate: dateOf(last), interval: 'day', timezone: 'UTC' };
    const seen = await daemon.db
      .transaction(async (trx) => {
        for (const table of [ORDER_TABLE, SUBSCRIPTION_TABLE, CHECKOUT_TABLE]) await trx(table).where({ organization_id: organizationId }).delete();
        const answer = await getMetrics(trx, request);
        throw Object.assign(new Error('rolled back'), { answer });
      })
      .catch((error: { answer?: Awaited<ReturnType<typeof getMetrics>> }) => error.answer);
    expect(seen?.totals.orders).toBe(0);
    expect((await getMetrics(daemon.db, request)).totals.orders).toBeGreaterThan(10);
  });

  it('holds after every change exactly what a rebuild from the rows holds', async () => {
    const kept = await metricsRollupRows(daemon.db, organizationId);
    expect(kept[ORDER_TABLE]!.length).toBeGreaterThan(0);
    expect(kept).toEqual(await rebuiltMetricsRollupRows(daemon.db, organizationId));
  });
});
