import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';

let daemon: TestDaemon;
let acme: Seller;
let customerId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  acme = await seller(daemon, 'Portal Link Shop');
  customerId = (await tillJson(['customers', 'create', '--email', 'cleo@example.com', '--external-id', 'usr_cleo'], acme.env)).id;
});
afterAll(() => daemon?.close());

const me = (link: string) =>
  fetch(`${daemon.url}/v1/customer-portal/customers/me`, { headers: { authorization: `Bearer ${new URL(link).searchParams.get('customer_session_token')}` } });

describe('till customers portal', () => {
  it('prints the portal link of a fresh customer session, whose token opens the portal as that customer', async () => {
    const result = await till(['customers', 'portal', customerId], acme.env);
    expect(result.exitCode).toBe(0);
    const [link] = result.stdout.split('\n');
    expect(link).toMatch(new RegExp(`^${daemon.url}/portal/portal-link-shop[^?]*\\?customer_session_token=till_cst_`));
    expect(result.stdout).toContain('whoever has this link acts as the customer');
    expect(result.stdout).not.toContain('Opened in your browser');
    const res = await me(link!);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: customerId, email: 'cleo@example.com' });
  });

  it('finds the customer by external id with --external, and answers JSON with --json', async () => {
    const answer = await tillJson(['customers', 'portal', 'usr_cleo', '--external', '--return-url', 'https://shop.example/account'], acme.env);
    expect(answer).toMatchObject({ customer_id: customerId, opened: false });
    expect(new Date(answer.expires_at).getTime()).toBeGreaterThan(Date.now());
    expect((await me(answer.customer_portal_url)).status).toBe(200);
  });

  it('fails, saying so, for a customer that does not exist', async () => {
    const result = await till(['customers', 'portal', '00000000-0000-4000-8000-000000000000'], acme.env);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('Customer does not exist');
  });
});
