import type { Polar } from '@polar-sh/sdk';
import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { RFCDate } from '@polar-sh/sdk/types/rfcdate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';

// A known history, built on the test clock around Europe/Paris's next daylight-saving change (day D, whose local
// day lasts 23 or 25 hours), then every metric of every day checked against figures worked out below by hand.

const ZONE = 'Europe/Paris';
const DAY = 86_400_000;

/** Paris's offset from UTC at an instant, in hours (+1 in winter, +2 in summer). */
function parisOffset(instant: number): number {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: ZONE, timeZoneName: 'shortOffset' }).formatToParts(new Date(instant)).find((p) => p.type === 'timeZoneName')!.value;
  return Number(name.replace('GMT', '') || 0);
}
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
/** The instant of a Paris wall-clock time (never inside the skipped or repeated hour in this test). */
function paris(date: string, time: string): Date {
  const wall = Date.parse(`${date}T${time}:00Z`);
  for (const offset of [1, 2]) if (parisOffset(wall - offset * 3_600_000) === offset) return new Date(wall - offset * 3_600_000);
  throw new Error(`no such Paris time ${date} ${time}`);
}
/** The first Sunday, twelve days or more from now, on which Paris changes its clocks. */
function nextChangeDay(): { date: string; hours: number } {
  const today = new Date().toISOString().slice(0, 10);
  for (let k = 12; k < 400; k++) {
    const date = addDays(today, k);
    const before = parisOffset(Date.parse(`${addDays(date, -1)}T12:00:00Z`));
    const after = parisOffset(Date.parse(`${date}T12:00:00Z`));
    if (before !== after) return { date, hours: 24 - (after - before) };
  }
  throw new Error('no daylight-saving change within a year');
}

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let sdk: Polar;
let anonymous: Polar;
const D = nextChangeDay();
const d = (k: number) => addDays(D.date, k);

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);
async function clockTo(instant: Date) {
  const res = await v1(owner.token, 'POST', `/organizations/${organizationId}/clock/advance`, { to: instant.toISOString() });
  expect(res.status).toBe(200);
  expect((await res.json()).jobs_failed).toBe(0);
}
/** A checkout confirmed the way a customer confirms one; its order, and its subscription when the product recurs. */
async function buy(productId: string, email: string) {
  const checkout = await sdk.checkouts.create({ products: [productId], customerEmail: email });
  await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  const done = await sdk.checkouts.get({ id: checkout.id });
  expect(done.status).toBe('succeeded');
  const orders = (await sdk.orders.list({ checkoutId: checkout.id })).result.items;
  expect(orders).toHaveLength(1);
  return { order: orders[0]!, subscriptionId: done.subscriptionId ?? null, customerId: orders[0]!.customerId };
}

const history: { subscriptions: Record<string, string>; customers: Record<string, string>; oneOff: string; monthlyProduct: string; upgradeDay: string; renewalDay: string } = {
  subscriptions: {},
  customers: {},
  oneOff: '',
  monthlyProduct: '',
  upgradeDay: '',
  renewalDay: '',
};

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Mia Metrics' });
  organizationId = await createOrganization(owner, 'Metrics Shop');
  sdk = polarSdk(daemon.url, owner.token);
  anonymous = polarSdk(daemon.url, '');
  expect((await v1(owner.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
  const product = (body: object) => sdk.products.create({ organizationId, ...body } as ProductCreate);
  const oneOff = await product({ name: 'Guide', prices: [{ amountType: 'fixed', priceAmount: 2000 }] });
  const monthly = await product({ name: 'Monthly', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
  const yearly = await product({ name: 'Yearly', recurringInterval: 'year', prices: [{ amountType: 'fixed', priceAmount: 12000 }] });
  const pro = await product({ name: 'Pro', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 3000 }] });
  history.oneOff = oneOff.id;
  history.monthlyProduct = monthly.id;

  // D-10 10:00 and 10:05: S1 (monthly, 1000) and S2 (yearly, 12000 = 1000 a month) start.
  await clockTo(paris(d(-10), '10:00'));
  const s1 = await buy(monthly.id, 'one@example.com');
  await clockTo(paris(d(-10), '10:05'));
  const s2 = await buy(yearly.id, 'two@example.com');
  // D-9: a checkout opened and never paid.
  await clockTo(paris(d(-9), '09:00'));
  await sdk.checkouts.create({ products: [oneOff.id], customerEmail: 'window@example.com' });
  // D 00:30 and D+1 00:30: one-off purchases just after local midnight (still the previous day in UTC).
  await clockTo(paris(d(0), '00:30'));
  await buy(oneOff.id, 'four@example.com');
  await clockTo(paris(d(1), '00:30'));
  const refunded = await buy(oneOff.id, 'five@example.com');
  // D+1 00:40: S3 (monthly) starts.
  await clockTo(paris(d(1), '00:40'));
  const s3 = await buy(monthly.id, 'three@example.com');
  // D+2 09:00: S4 (monthly) starts; D+2 12:00: half of the second one-off is refunded.
  await clockTo(paris(d(2), '09:00'));
  const s4 = await buy(monthly.id, 'six@example.com');
  await clockTo(paris(d(2), '12:00'));
  expect(await sdk.refunds.create({ orderId: refunded.order.id, amount: 1000, reason: 'customer_request' })).toMatchObject({ status: 'succeeded' });
  // D+3: S2 is canceled at its period's end (too expensive); D+5: S4 is revoked at once (no reason given).
  await clockTo(paris(d(3), '12:00'));
  await sdk.subscriptions.update({ id: s2.subscriptionId!, subscriptionUpdate: { cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive' } });
  await clockTo(paris(d(5), '12:00'));
  await sdk.subscriptions.revoke({ id: s4.subscriptionId! });
  // Half-way through S3's first period it upgrades to Pro (3000) with an invoice: 3000/2 - 1000/2 = 1000 charged now.
  const period = await sdk.subscriptions.get({ id: s3.subscriptionId! });
  const half = new Date((period.currentPeriodStart.getTime() + period.currentPeriodEnd!.getTime()) / 2);
  await clockTo(half);
  await sdk.subscriptions.update({ id: s3.subscriptionId!, subscriptionUpdate: { productId: pro.id, prorationBehavior: 'invoice' } });
  history.upgradeDay = half.toLocaleDateString('en-CA', { timeZone: ZONE });
  // S1 renews a month after it started (1000), then the clock runs to the end of D+24.
  const s1Period = await sdk.subscriptions.get({ id: s1.subscriptionId! });
  history.renewalDay = s1Period.currentPeriodEnd!.toLocaleDateString('en-CA', { timeZone: ZONE });
  await clockTo(paris(d(24), '23:00'));

  history.subscriptions = { s1: s1.subscriptionId!, s2: s2.subscriptionId!, s3: s3.subscriptionId!, s4: s4.subscriptionId! };
  history.customers = { c1: s1.customerId, c2: s2.customerId };
}, 240_000);
afterAll(async () => {
  for (const line of daemon?.logs ?? []) if (line.err) console.error(JSON.stringify(line.err).slice(0, 3000));
  await daemon?.close();
});

interface WirePeriod extends Record<string, number | string> {
  timestamp: string;
}
async function metrics(query: string) {
  const res = await v1(owner.token, 'GET', `/metrics/?${query}`);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body as { periods: WirePeriod[]; totals: Record<string, number>; metrics: Record<string, { slug: string; display_name: string; type: string }>; currency: string };
}

/** Every metric of day D+k, worked out by hand from the history above. */
function expectedDay(k: number, date: string): Record<string, number> {
  const orders: Record<string, number> = {};
  const add = (values: Record<string, number>) => {
    for (const [key, value] of Object.entries(values)) orders[key] = (orders[key] ?? 0) + value;
  };
  // Orders: the first orders of S1 and S2 on D-10, the one-offs on D and D+1 (the second refunded by half), S3 on D+1
  // and S4 on D+2, the upgrade charge and S1's renewal (both renewals of subscriptions started days before).
  if (k === -10) add({ orders: 2, revenue: 13000, net_revenue: 13000, new_subscriptions_revenue: 13000, new_subscriptions_net_revenue: 13000 });
  if (k === 0) add({ orders: 1, revenue: 2000, net_revenue: 2000, one_time_products: 1, one_time_products_revenue: 2000, one_time_products_net_revenue: 2000 });
  if (k === 1) add({ orders: 2, revenue: 3000, net_revenue: 2000, one_time_products: 1, one_time_products_revenue: 2000, one_time_products_net_revenue: 1000, new_subscriptions_revenue: 1000, new_subscriptions_net_revenue: 1000 });
  if (k === 2) add({ orders: 1, revenue: 1000, net_revenue: 1000, new_subscriptions_revenue: 1000, new_subscriptions_net_revenue: 1000 });
  for (const day of [history.upgradeDay, history.renewalDay]) {
    if (date === day) add({ orders: 1, revenue: 1000, net_revenue: 1000, renewed_subscriptions: 1, renewed_subscriptions_revenue: 1000, renewed_subscriptions_net_revenue: 1000 });
  }
  const n = orders.orders ?? 0;
  // Subscriptions: S1 and S2 from D-10, S3 from D+1 (at its current 3000 a month, as Polar counts it), S4 on D+2..D+4.
  // Committed: S1 and S3 only (S2 is set to end, S4 ended). ARPU: MRR over the distinct customers.
  const active = k < 1 ? 2 : k === 1 ? 3 : k <= 4 ? 4 : 3;
  const mrr = k < 1 ? 2000 : k === 1 ? 5000 : k <= 4 ? 6000 : 5000;
  const committedMrr = k < 1 ? 1000 : 4000;
  const checkouts = { [-10]: 2, [-9]: 1, 0: 1, 1: 2, 2: 1 }[k] ?? 0;
  const succeeded = { [-10]: 2, 0: 1, 1: 2, 2: 1 }[k] ?? 0;
  return {
    orders: n,
    revenue: orders.revenue ?? 0,
    net_revenue: orders.net_revenue ?? 0,
    average_order_value: n ? Math.ceil(orders.revenue! / n) : 0,
    net_average_order_value: n ? Math.ceil(orders.net_revenue! / n) : 0,
    one_time_products: orders.one_time_products ?? 0,
    one_time_products_revenue: orders.one_time_products_revenue ?? 0,
    one_time_products_net_revenue: orders.one_time_products_net_revenue ?? 0,
    new_subscriptions: { [-10]: 2, 1: 1, 2: 1 }[k] ?? 0,
    new_subscriptions_revenue: orders.new_subscriptions_revenue ?? 0,
    new_subscriptions_net_revenue: orders.new_subscriptions_net_revenue ?? 0,
    renewed_subscriptions: orders.renewed_subscriptions ?? 0,
    renewed_subscriptions_revenue: orders.renewed_subscriptions_revenue ?? 0,
    renewed_subscriptions_net_revenue: orders.renewed_subscriptions_net_revenue ?? 0,
    active_subscriptions: active,
    committed_subscriptions: k < 1 ? 1 : 2,
    monthly_recurring_revenue: mrr,
    committed_monthly_recurring_revenue: committedMrr,
    trial_monthly_recurring_revenue: 0,
    trial_committed_monthly_recurring_revenue: 0,
    annual_recurring_revenue: mrr * 12,
    committed_annual_recurring_revenue: committedMrr * 12,
    average_revenue_per_user: Math.round(mrr / (k < 1 ? 2 : k === 1 ? 3 : k <= 4 ? 4 : 3)),
    checkouts,
    succeeded_checkouts: succeeded,
    checkouts_conversion: checkouts ? succeeded / checkouts : 0,
    canceled_subscriptions: k === 3 || k === 5 ? 1 : 0,
    canceled_subscriptions_customer_service: 0,
    canceled_subscriptions_low_quality: 0,
    canceled_subscriptions_missing_features: 0,
    canceled_subscriptions_switched_service: 0,
    canceled_subscriptions_too_complex: 0,
    canceled_subscriptions_too_expensive: k === 3 ? 1 : 0,
    canceled_subscriptions_unused: 0,
    canceled_subscriptions_other: k === 5 ? 1 : 0,
    churned_subscriptions: k === 5 ? 1 : 0,
    // Canceled in the 30 days before the day, over the active at their start: none active before D-9 00:00; from D+21
    // on, S1 and S2 were active at the window's start and S2 and S4 were canceled inside it.
    churn_rate: k >= 21 ? 1 : 0,
  };
}

describe('/v1/metrics', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    expect((await v1(undefined, 'GET', '/metrics/?start_date=2026-01-01&end_date=2026-01-31&interval=day')).status).toBe(401);
    expect((await v1(undefined, 'GET', '/metrics/limits')).status).toBe(401);
  });

  it('answers every metric of every Paris day across the daylight-saving change as worked out by hand', async () => {
    const body = await metrics(`start_date=${d(-10)}&end_date=${d(24)}&interval=day&timezone=${ZONE}`);
    expect(body.currency).toBe('usd');
    expect(body.periods).toHaveLength(35);
    let cumulative = 0;
    let netCumulative = 0;
    body.periods.forEach((period, index) => {
      const k = index - 10;
      const date = d(k);
      // Each period starts at Paris midnight, written with the offset of that midnight.
      expect(new Date(period.timestamp).getTime()).toBe(paris(date, '00:00').getTime());
      expect(period.timestamp).toBe(`${date}T00:00:00+0${parisOffset(paris(date, '00:00').getTime())}:00`);
      const expected = expectedDay(k, date);
      cumulative += expected.revenue!;
      netCumulative += expected.net_revenue!;
      expect({ ...period, timestamp: undefined }, `day D${k >= 0 ? '+' : ''}${k} (${date})`).toEqual({ ...expected, cumulative_revenue: cumulative, net_cumulative_revenue: netCumulative, timestamp: undefined });
    });
    expect(history.upgradeDay > d(5) && history.upgradeDay < history.renewalDay && history.renewalDay <= d(24)).toBe(true);

    expect(body.totals).toMatchObject({
      orders: 8,
      revenue: 21000,
      net_revenue: 20000,
      cumulative_revenue: 21000,
      net_cumulative_revenue: 20000,
      average_order_value: 21000 / 8,
      net_average_order_value: 20000 / 8,
      one_time_products: 2,
      one_time_products_revenue: 4000,
      one_time_products_net_revenue: 3000,
      new_subscriptions: 4,
      new_subscriptions_revenue: 15000,
      renewed_subscriptions: 2,
      renewed_subscriptions_revenue: 2000,
      active_subscriptions: 3,
      committed_subscriptions: 2,
      monthly_recurring_revenue: 5000,
      committed_monthly_recurring_revenue: 4000,
      annual_recurring_revenue: 60000,
      average_revenue_per_user: 1667,
      checkouts: 7,
      succeeded_checkouts: 6,
      checkouts_conversion: 6 / 7,
      canceled_subscriptions: 2,
      canceled_subscriptions_too_expensive: 1,
      canceled_subscriptions_other: 1,
      churned_subscriptions: 1,
      churn_rate: 1,
    });
    expect(body.metrics.monthly_recurring_revenue).toEqual({ slug: 'monthly_recurring_revenue', display_name: 'Monthly Recurring Revenue', type: 'currency' });
    expect(body.metrics.churn_rate.type).toBe('percentage');
  });

  it('cuts the day of the change into its 23 or 25 Paris hours, the first purchase in the hour after midnight', async () => {
    const body = await metrics(`start_date=${d(0)}&end_date=${d(0)}&interval=hour&timezone=${ZONE}&metrics=orders&metrics=revenue`);
    expect(body.periods).toHaveLength(D.hours);
    expect(body.periods.map((p) => p.orders)).toEqual([1, ...new Array(D.hours - 1).fill(0)]);
    expect(Object.keys(body.periods[0]!).sort()).toEqual(['orders', 'revenue', 'timestamp']);
    expect(Object.keys(body.totals).sort()).toEqual(['orders', 'revenue']);
  });

  it('counts the same purchases on the previous UTC day when asked in UTC', async () => {
    const body = await metrics(`start_date=${d(-1)}&end_date=${d(1)}&interval=day&metrics=orders&metrics=one_time_products`);
    expect(body.periods.map((p) => p.timestamp)).toEqual([`${d(-1)}T00:00:00Z`, `${d(0)}T00:00:00Z`, `${d(1)}T00:00:00Z`]);
    // D 00:30 Paris is D-1 in UTC; D+1 00:30 and 00:40 Paris are still D in UTC.
    expect(body.periods.map((p) => [p.orders, p.one_time_products])).toEqual([[1, 1], [2, 1], [0, 0]]);
  });

  it('filters by product, billing type and customer', async () => {
    const range = `start_date=${d(-10)}&end_date=${d(24)}&interval=month&timezone=${ZONE}`;
    const oneTime = await metrics(`${range}&billing_type=one_time`);
    expect(oneTime.totals).toMatchObject({ orders: 2, revenue: 4000, net_revenue: 3000, active_subscriptions: 0, checkouts: 3, succeeded_checkouts: 2 });
    const monthly = await metrics(`${range}&product_id=${history.monthlyProduct}`);
    // S1 and S4 started on Monthly; S3 is on Pro since its upgrade, and a subscription counts under its current product.
    expect(monthly.totals.new_subscriptions).toBe(2);
    const customer = await metrics(`${range}&customer_id=${history.customers.c1}`);
    expect(customer.totals).toMatchObject({ orders: 2, revenue: 2000, renewed_subscriptions: 1, active_subscriptions: 1, monthly_recurring_revenue: 1000, average_revenue_per_user: 1000 });
  });

  it('starts weeks on Monday and months on the 1st, counting only what falls inside the asked days', async () => {
    const weeks = await metrics(`start_date=${d(-10)}&end_date=${d(24)}&interval=week&timezone=${ZONE}&metrics=orders`);
    const first = new Date(weeks.periods[0]!.timestamp);
    expect(first.toLocaleDateString('en-US', { timeZone: ZONE, weekday: 'long' })).toBe('Monday');
    expect(weeks.totals.orders).toBe(8);
    const late = await metrics(`start_date=${d(1)}&end_date=${d(1)}&interval=month&timezone=${ZONE}&metrics=orders&metrics=cumulative_revenue`);
    expect(late.periods).toHaveLength(1);
    expect(late.periods[0]!.timestamp.slice(0, 10)).toBe(`${d(1).slice(0, 8)}01`);
    // Only D+1's two orders, but the cumulative revenue starts from everything sold before D+1.
    expect(late.periods[0]).toMatchObject({ orders: 2, cumulative_revenue: 13000 + 2000 + 3000 });
  });

  it('refuses an unknown timezone, a reversed or too long range and an unknown metric with a 422 naming the field', async () => {
    const cases: [string, unknown[]][] = [
      [`start_date=${d(0)}&end_date=${d(1)}&interval=day&timezone=Mars/Olympus`, ['query', 'timezone']],
      [`start_date=${d(1)}&end_date=${d(0)}&interval=day`, ['query', 'end_date']],
      [`start_date=${d(0)}&end_date=${d(8)}&interval=hour`, ['query']],
      [`start_date=${d(0)}&end_date=${d(1)}&interval=day&metrics=orders&metrics=happiness`, ['query', 'metrics']],
      [`start_date=2026-02-30&end_date=${d(1)}&interval=day`, ['query', 'start_date']],
      [`start_date=${d(0)}&end_date=${d(1)}&interval=fortnight`, ['query', 'interval']],
    ];
    for (const [query, loc] of cases) {
      const res = await v1(owner.token, 'GET', `/metrics/?${query}`);
      expect(res.status, query).toBe(422);
      const body = await res.json();
      expect(body.detail[0].loc, query).toEqual(loc);
    }
  });

  it('answers the last 30 days by day when no range is given', async () => {
    const before = new Date().toISOString().slice(0, 10);
    const body = await metrics('metrics=orders');
    const after = new Date().toISOString().slice(0, 10);
    expect(body.periods).toHaveLength(31);
    expect([`${before}T00:00:00Z`, `${after}T00:00:00Z`]).toContain(body.periods.at(-1)!.timestamp);
  });

  it('is read by @polar-sh/sdk 0.49 metrics.get and metrics.limits with response validation on', async () => {
    const answer = await sdk.metrics.get({ startDate: new RFCDate(d(-10)), endDate: new RFCDate(d(24)), interval: 'day', timezone: ZONE });
    expect(answer.periods).toHaveLength(35);
    expect(answer.totals.revenue).toBe(21000);
    expect(answer.totals.monthlyRecurringRevenue).toBe(5000);
    expect(answer.metrics.averageRevenuePerUser).toEqual({ slug: 'average_revenue_per_user', displayName: 'Average Revenue Per User', type: 'currency' });
    const limits = await sdk.metrics.limits();
    expect(limits.intervals.day).toEqual({ minDays: 0, maxDays: 366 });
    expect(limits.intervals.hour.maxDays).toBe(7);
    expect(limits.minDate.toString()).toBe('2023-01-01');
  });
});
