import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Json, v1Request } from '../testing/v1.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Mo Meter' });
  organizationId = await createOrganization(owner, 'Meter Changes');
  await v1Json(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true });
});
afterAll(() => daemon?.close());

const call = (method: string, path: string, body?: unknown) => v1Json(daemon.url, owner.token, method, path, body);
const COUNT_CALLS = { filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api.call' }] }, aggregation: { func: 'count' } };

async function meteredPlan(meterId: string) {
  return call('POST', '/products/', {
    organization_id: organizationId,
    name: `Usage ${meterId.slice(0, 6)}`,
    recurring_interval: 'month',
    prices: [
      { amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' },
      { amount_type: 'metered_unit', meter_id: meterId, unit_amount: '10', price_currency: 'usd' },
    ],
  });
}

describe('PATCH /v1/meters/{id} after the meter has billed', () => {
  it('changes filter and aggregation while no order has billed the meter, even when a price uses it', async () => {
    const meter = await call('POST', '/meters/', { organization_id: organizationId, name: 'Unbilled', ...COUNT_CALLS });
    await meteredPlan(meter.id);
    const changed = await call('PATCH', `/meters/${meter.id}`, { aggregation: { func: 'sum', property: 'metadata.units' } });
    expect(changed.aggregation).toMatchObject({ func: 'sum' });
  });

  it('refuses filter and aggregation with Polar\'s 422 once a renewal billed its usage, and still takes the other fields', async () => {
    const meter = await call('POST', '/meters/', { organization_id: organizationId, name: 'Billed', ...COUNT_CALLS });
    const plan = await meteredPlan(meter.id);
    const checkout = await call('POST', '/checkouts/', { products: [plan.id], customer_email: 'metered@example.com' });
    const paid = await v1Json(daemon.url, undefined, 'POST', `/checkouts/client/${checkout.client_secret}/confirm`, { confirmation_token_id: 'tok_visa', customer_billing_address: { country: 'US', state: 'NY' } });
    await call('POST', '/events/ingest', { events: [{ name: 'api.call', customer_id: paid.customer_id }] });
    expect((await call('POST', `/organizations/${organizationId}/clock/advance`, { by: '+1month' })).jobs_failed).toBe(0);
    const orders = (await call('GET', `/orders/?customer_id=${paid.customer_id}`)).items;
    expect(orders.some((o: { billing_reason: string }) => o.billing_reason === 'subscription_cycle')).toBe(true);

    const refused = await v1Request(daemon.url, owner.token, 'PATCH', `/meters/${meter.id}`, { name: 'Renamed', ...COUNT_CALLS });
    expect(refused.status).toBe(422);
    const body = await refused.json();
    expect(body.detail).toEqual([
      { loc: ['body', 'filter'], msg: "This field can't be updated because the meter is already aggregating events.", type: 'forbidden' },
      { loc: ['body', 'aggregation'], msg: "This field can't be updated because the meter is already aggregating events.", type: 'forbidden' },
    ]);
    expect((await call('GET', `/meters/${meter.id}`)).name).toBe('Billed');

    expect((await call('PATCH', `/meters/${meter.id}`, { name: 'Renamed' })).name).toBe('Renamed');
  });
});
