import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../App.js';
import { anEvent, fakeBackend, ORGS, renderApp, renderUi, until, type Sent } from '../testing.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

const day = (n: number, values: { revenue: number; orders: number; mrr: number; active: number }) => ({
  timestamp: new Date(Date.UTC(2026, 10, 1 + n)).toISOString(),
  revenue: values.revenue,
  orders: values.orders,
  monthly_recurring_revenue: values.mrr,
  active_subscriptions: values.active,
});

/** A server whose figures move: `paid` orders of 1,500 each today. */
function shop() {
  let paid = 1;
  const fake = fakeBackend(({ path }: Sent) => {
    if (path.startsWith('/v1/metrics/')) {
      const periods = Array.from({ length: 30 }, (_, n) => day(n, { revenue: n * 100, orders: n % 3, mrr: 2500 * Math.min(n, 4), active: Math.min(n, 4) }));
      periods.push(day(30, { revenue: 1500 * paid, orders: paid, mrr: 10_000, active: 4 }));
      return { periods, totals: {}, metrics: {}, currency: 'usd' };
    }
    if (path.startsWith('/v1/payments/')) {
      return { items: [{ id: 'pay_1', created_at: '2026-12-01T09:30:00Z', amount: 2500, currency: 'usd', status: 'failed', decline_reason: 'card_declined', decline_message: 'Your card was declined.' }] };
    }
    if (path.startsWith('/v1/checkouts/')) {
      return { items: [{ id: 'chk_1', created_at: '2026-12-01T09:31:00Z', total_amount: 900, currency: 'usd', status: 'failed', customer_email: 'ada@example.com', product: { name: 'Pro plan' } }] };
    }
    return { items: [] };
  });
  return { ...fake, pay: () => (paid += 1) };
}

describe('the Dashboard tab', () => {
  it('opens first with today’s revenue and orders, MRR and active subscriptions with their trend, and the failed payments and checkouts', async () => {
    const fake = shop();
    const app = renderApp(fake.backend);
    cleanup = app.unmount;
    const frame = await app.showing('Failed checkouts');
    expect(frame).toMatch(/1 Dash/);
    expect(frame).toMatch(/Revenue\s+15\.00 USD\s+1 order/);
    expect(frame).toMatch(/MRR\s+100\.00 USD\s+[▁-█]+/);
    expect(frame).toMatch(/Active subscriptions\s+4\s+[▁-█]+/);
    expect(frame).toMatch(/Orders\s+\d+\s+[▁-█]+/);
    expect(frame).toContain('25.00 USD  Your card was declined.');
    expect(frame).toContain('9.00 USD  ada@example.com · Pro plan');
    expect(frame).toContain('r reload · ? help · q quit');
    // ink-testing-library draws 100 columns; the tmux test checks 80.
    for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
    const metrics = fake.sent.find((sent) => sent.path.startsWith('/v1/metrics/'))!;
    expect(metrics.path).toContain('organization_id=org_A');
    expect(metrics.path).toContain('interval=day');
    expect(metrics.path).toMatch(/timezone=[\w%]+/);
    expect(metrics.path).toContain('metrics=monthly_recurring_revenue');
    expect(fake.sent.find((sent) => sent.path.startsWith('/v1/payments/'))!.path).toContain('status=failed');
    expect(fake.sent.find((sent) => sent.path.startsWith('/v1/checkouts/'))!.path).toContain('status=failed');
  });

  it('loads the figures again when an order event arrives on the live stream, but not for other events', async () => {
    const fake = shop();
    const app = renderApp(fake.backend);
    cleanup = app.unmount;
    await app.showing(/Revenue\s+15\.00 USD\s+1 order/);
    const loads = () => fake.sent.filter((sent) => sent.path.startsWith('/v1/metrics/')).length;
    expect(loads()).toBe(1);
    fake.emit(anEvent('customer.updated'));
    await app.showing('Revenue');
    fake.pay();
    fake.emit(anEvent('order.paid'));
    await app.showing(/Revenue\s+30\.00 USD\s+2 orders/);
    expect(loads()).toBe(2);
  });

  it('keeps one load in flight however fast events arrive, and loads once more after it with what came meanwhile', async () => {
    let paid = 1;
    let gate: Promise<void> = Promise.resolve();
    let open = () => {};
    const fake = fakeBackend(async ({ path }) => {
      if (!path.startsWith('/v1/metrics/')) return { items: [] };
      const orders = paid;
      await gate;
      return { periods: [day(0, { revenue: 1500 * orders, orders, mrr: 0, active: 0 })], totals: {}, metrics: {}, currency: 'usd' };
    });
    const app = renderApp(fake.backend, { dashboardGapMs: 20 });
    cleanup = app.unmount;
    await app.showing(/1 order\b/);
    const loads = () => fake.sent.filter((sent) => sent.path.startsWith('/v1/metrics/')).length;
    gate = new Promise((resolve) => (open = resolve));
    paid += 1;
    fake.emit(anEvent('order.paid'));
    await until(() => loads() === 2, 'the load the first event causes');
    for (let n = 0; n < 50; n += 1) {
      paid += 1;
      fake.emit(anEvent('order.paid'));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    // Held in flight: the events that came meanwhile wait for it rather than start loads of their own.
    expect(loads()).toBe(2);
    open();
    await app.showing(/52 orders/);
    expect(loads()).toBe(3);
  });

  it('reloads on r and shows a refusal as the server worded it', async () => {
    let refuse = false;
    const fake = fakeBackend(({ path }) => {
      if (refuse) throw new Error('Not permitted: metrics:read');
      if (path.startsWith('/v1/metrics/')) return { periods: [day(0, { revenue: 0, orders: 0, mrr: 0, active: 0 })], totals: {}, metrics: {}, currency: 'eur' };
      return { items: [] };
    });
    const app = renderApp(fake.backend);
    cleanup = app.unmount;
    const frame = await app.showing(/Revenue\s+0\.00 EUR\s+0 orders/);
    expect(frame).toMatch(/Failed payments[^\n]*\n\s+None\./);
    refuse = true;
    await app.press('r');
    await app.showing('✗ Not permitted: metrics:read');
  });

  it('draws its figures again when they load, not at each flush of the live stream (10 a second under load)', async () => {
    // The failed payment's line is drawn from its decline message: each read is one drawing of the figures.
    let drawn = 0;
    const payment = { id: 'pay_1', created_at: '2026-12-01T09:30:00Z', amount: 2500, currency: 'usd', status: 'failed' };
    Object.defineProperty(payment, 'decline_message', { enumerable: true, get: () => ((drawn += 1), 'Your card was declined.') });
    const fake = fakeBackend(({ path }: Sent) => {
      if (path.startsWith('/v1/metrics/')) return { periods: [day(0, { revenue: 1500, orders: 1, mrr: 10_000, active: 4 })], totals: {}, metrics: {}, currency: 'usd' };
      if (path.startsWith('/v1/payments/')) return { items: [payment] };
      return { items: [] };
    });
    let commits = 0;
    const app = renderUi(<App backend={fake.backend} organizations={ORGS} organizationId="org_A" color={false} flushMs={5} onCommit={() => (commits += 1)} />);
    cleanup = app.unmount;
    await app.showing('Your card was declined.');
    const before = { drawn, commits, loads: fake.sent.length };
    // Events that move no figure: the tab re-renders at each flush (to see whether to load), its figures do not.
    await until(() => {
      fake.emit(anEvent('customer.updated'));
      return commits >= before.commits + 5;
    }, 'five flushes of the stream');
    expect(fake.sent.length).toBe(before.loads);
    expect(drawn).toBe(before.drawn);
  });
});

