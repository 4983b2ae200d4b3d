import type { ProductCreate } from '@polar-sh/sdk/models/components/productcreate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { polarSdk } from '../../../daemon/testing/v1.js';
import { seller, tillJson, tillOnTerminal, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;
let planId: string;
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Metrics CLI Shop');
  const sdk = polarSdk(daemon.url, acme.user.token);
  const anonymous = polarSdk(daemon.url, '');
  const buy = async (productId: string, email: string) => {
    const checkout = await sdk.checkouts.create({ products: [productId], customerEmail: email });
    await anonymous.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { confirmationTokenId: 'tok_visa', customerBillingAddress: { country: 'FR' } } });
  };
  const plan = await sdk.products.create({ organizationId: acme.organizationId, name: 'Plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 2500 }] } as ProductCreate);
  const guide = await sdk.products.create({ organizationId: acme.organizationId, name: 'Guide', prices: [{ amountType: 'fixed', priceAmount: 1000 }] } as ProductCreate);
  planId = plan.id;
  await buy(plan.id, 'a@example.com');
  await buy(plan.id, 'b@example.com');
  await buy(guide.id, 'c@example.com');
});
afterAll(() => daemon?.close());

describe('till metrics', () => {
  it('answers the API’s metrics with --json: today’s orders, revenue and MRR among the last 30 days', async () => {
    const answer = await tillJson(['metrics'], acme.env);
    expect(answer.periods).toHaveLength(31);
    expect(answer.currency).toBe('usd');
    expect(answer.totals).toMatchObject({ orders: 3, revenue: 6000, active_subscriptions: 2, monthly_recurring_revenue: 5000, checkouts: 3 });
    const last = answer.periods.at(-1);
    expect([last.orders, last.revenue]).toEqual([3, 6000]);
  });

  it('filters by product and interval', async () => {
    const answer = await tillJson(['metrics', '--from', today(), '--to', today(), '--interval', 'hour', '--product', planId], acme.env);
    expect(answer.periods).toHaveLength(24);
    expect(answer.totals).toMatchObject({ orders: 2, revenue: 5000 });
  });

  it('shows a table of sparklines and totals on a terminal', async () => {
    const result = await tillOnTerminal(['metrics', '--from', today(), '--to', today(), '--interval', 'hour'], acme.env);
    expect(result.exitCode, result.stdout).toBe(0);
    const screen = result.stdout.replace(/\x1b\[[0-9;]*m/g, '');
    expect(screen).toMatch(/METRIC\s+TREND\s+TOTAL/);
    expect(screen).toMatch(/Revenue\s+[▁▂▃▄▅▆▇█]{24}\s+60\.00 USD/);
    expect(screen).toMatch(/Monthly Recurring Revenue\s+[▁▂▃▄▅▆▇█]{24}\s+50\.00 USD/);
    expect(screen).toMatch(/Checkouts Conversion Rate\s+[▁▂▃▄▅▆▇█]{24}\s+100\.0%/);
  });

  it('prints one tab-separated row per period off a terminal', async () => {
    const result = await till(['metrics', '--from', today(), '--to', today()], acme.env);
    expect(result.exitCode, result.stderr).toBe(0);
    const [row] = result.stdout.trim().split('\n');
    const cells = row!.split('\t');
    expect(cells[0]).toBe(`${today()}T00:00:00Z`);
    expect(cells.slice(1, 4)).toEqual(['6000', '6000', '3']);
  });

  it('refuses a bad --interval or --from as a flag value it cannot use (exit 5, INVALID_FLAG)', async () => {
    expect((await till(['metrics', '--interval', 'fortnight'], acme.env)).exitCode).toBe(5);
    const bad = await till(['metrics', '--from', '31/01/2026'], acme.env);
    expect(bad.exitCode).toBe(5);
    expect(bad.stderr).toContain('--from "31/01/2026"');
  });
});
