import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../../core/billing/shared/scopes.js';
import { uploadDownloadable } from '../../../daemon/testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller } from '../../testing/catalog.js';
import { TILL_BIN, tillEnv } from '../../testing/till.js';

/*
 * An apply that stops part-way leaves a state the next apply of the same file finishes, creating nothing twice,
 * and a third apply finds nothing to change. Two real ways to stop: the server refuses a step's input (the
 * apply reports what it did before it), and the CLI killed (SIGKILL) after tilld made an object but before the
 * answer reached it — so the object exists with no key recorded, and only the step's idempotency key keeps the
 * next apply from making it again.
 */

const CATALOG = `version: 1
meters:
  - key: api-calls
    name: API calls
    filter: { conjunction: and, clauses: [{ property: name, operator: eq, value: api.call }] }
    aggregation: { func: count }
benefits:
  - key: support
    type: custom
    description: Priority support
  - key: guide
    type: downloadables
    description: The PDF guide
    properties: { files: ["\${env:GUIDE_FILE_ID}"] }
products:
  - key: pro
    name: Pro
    recurring_interval: month
    prices:
      - { amount_type: fixed, price_amount: 1500, price_currency: usd }
      - { amount_type: metered_unit, meter: api-calls, unit_amount: "0.5", price_currency: usd }
    benefits: [support, guide]
  - key: ebook
    name: The e-book
    prices:
      - { amount_type: fixed, price_amount: 1900, price_currency: usd }
    benefits: [guide]
discounts:
  - key: launch
    name: Launch week
    type: percentage
    basis_points: 2000
    duration: once
    products: [pro]
`;

let daemon: TestDaemon;
let ownerToken: string;

const till = (args: string[], env: Record<string, string>) => execa(process.execPath, [TILL_BIN, ...args], { env: tillEnv(env), extendEnv: false, reject: false, timeout: 200_000 });
const catalogFile = () => {
  const path = join(mkdtempSync(join(tmpdir(), 'till-catalog-interrupted-')), 'catalog.yaml');
  writeFileSync(path, CATALOG);
  return path;
};
const api = async (path: string) => (await fetch(`${daemon.url}${path}`, { headers: { authorization: `Bearer ${ownerToken}` } })).json();
const names = async (list: string, organizationId: string, field = 'name') =>
  ((await api(`/v1/${list}?organization_id=${organizationId}&limit=100`)).items as Record<string, string>[]).map((item) => item[field]).sort();
const keysOf = async (organizationId: string) =>
  ((await api(`/v1/catalog/keys?organization_id=${organizationId}`)).items as { kind: string; key: string; object_id: string }[]).map((binding) => `${binding.kind}:${binding.key}`).sort();

/** An organization of its own with an organization access token (CI) and an uploaded file for the downloadable. */
async function organization(name: string) {
  const shop = await seller(daemon, name);
  const minted = await fetch(`${daemon.url}/v1/organization-access-tokens/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${shop.user.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ organization_id: shop.organizationId, comment: 'ci', scopes: SCOPES }),
  });
  const token = (await minted.json()).token as string;
  const fileId = await uploadDownloadable(daemon, token, shop.organizationId, Buffer.from('%PDF-1.4 guide'));
  ownerToken = shop.user.token;
  return { organizationId: shop.organizationId, fileId, env: { TILL_SERVER: daemon.url, TILL_TOKEN: token, TILL_CONFIG_DIR: shop.env.TILL_CONFIG_DIR, TILL_RETRIES: '0' } };
}

/**
 * An HTTP proxy in front of tilld that passes every request on, except that the first one `withhold` picks is
 * answered by tilld and its answer then never sent back: the write happened, the caller never hears of it.
 */
async function withholdingProxy(target: string, withhold: (req: IncomingMessage) => boolean) {
  const upstream = new URL(target);
  let armed = true;
  let withheld = false;
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const forward = request({ hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        if (armed && withhold(req)) {
          armed = false;
          withheld = true;
          held.push(res);
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(Buffer.concat(chunks));
      });
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    withheld: () => withheld,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Polls `check` until it holds (no timed assertion: the test's timeout bounds it). */
async function until(check: () => boolean | Promise<boolean>) {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

beforeAll(async () => {
  daemon = await startTestDaemon();
});
afterAll(async () => {
  await daemon?.close();
});

describe('an apply that stops part-way', { timeout: 600_000 }, () => {
  it('reports what it did when tilld refuses a step, and the next apply of the same file finishes without doubling anything', async () => {
    const org = await organization('Refused Co');
    const file = catalogFile();
    // A file id that is no upload of this organization: tilld refuses the downloadable benefit.
    const refused = await till(['apply', file, '--yes'], { ...org.env, GUIDE_FILE_ID: '00000000-0000-4000-8000-000000000000' });
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toContain('Stopped at create benefit guide');
    expect(refused.stderr).toContain('Done before it (2): create meter api-calls, create benefit support.');
    expect(await names('meters/', org.organizationId)).toEqual(['API calls']);
    expect(await names('benefits/', org.organizationId, 'description')).toEqual(['Priority support']);
    expect(await keysOf(org.organizationId)).toEqual(['benefit:support', 'meter:api-calls']);

    const finished = await till(['apply', file, '--yes', '--json'], { ...org.env, GUIDE_FILE_ID: org.fileId });
    expect(finished.exitCode).toBe(0);
    const applied = JSON.parse(finished.stdout).applied.map((step: { action: string; kind: string; key: string }) => `${step.action} ${step.kind}:${step.key}`);
    expect(applied).toEqual(['create benefit:guide', 'create product:pro', 'create product:ebook', 'create discount:launch']);
    expect(await names('meters/', org.organizationId)).toEqual(['API calls']);
    expect(await names('benefits/', org.organizationId, 'description')).toEqual(['Priority support', 'The PDF guide']);
    expect(await names('products/', org.organizationId)).toEqual(['Pro', 'The e-book']);

    const third = await till(['apply', file, '--yes'], { ...org.env, GUIDE_FILE_ID: org.fileId });
    expect(third.exitCode).toBe(0);
    expect(third.stdout).toContain('Nothing to change');
  });

  it('is finished by the next apply after the CLI was killed between tilld making an object and its answer arriving', async () => {
    const org = await organization('Killed Co');
    const file = catalogFile();
    const env = { ...org.env, GUIDE_FILE_ID: org.fileId };
    // The creation of the first product is made by tilld, and its answer withheld.
    const proxy = await withholdingProxy(daemon.url, (req) => req.method === 'POST' && /^\/v1\/products\/?$/.test(req.url ?? ''));
    try {
      const child = till(['apply', file, '--yes'], { ...env, TILL_SERVER: proxy.url });
      let progress = '';
      child.stderr!.on('data', (chunk: Buffer) => (progress += chunk.toString()));
      await until(proxy.withheld);
      child.kill('SIGKILL');
      const killed = await child;
      expect(killed.signal).toBe('SIGKILL');
      // What it did, as it went: every step before the product.
      expect(progress).toContain('✓ create benefit guide');
      expect(progress).not.toContain('✓ create product pro');
    } finally {
      await proxy.close();
    }
    // Pro exists, but no key names it yet.
    expect(await names('products/', org.organizationId)).toEqual(['Pro']);
    expect(await keysOf(org.organizationId)).toEqual(['benefit:guide', 'benefit:support', 'meter:api-calls']);
    const proId = (await api(`/v1/products/?organization_id=${org.organizationId}&limit=100`)).items[0].id;

    const finished = await till(['apply', file, '--yes'], env);
    expect(finished.exitCode).toBe(0);
    // The product's creation was replayed (same step, same body, same Idempotency-Key), not made again.
    expect(await names('products/', org.organizationId)).toEqual(['Pro', 'The e-book']);
    const bindings = (await api(`/v1/catalog/keys?organization_id=${org.organizationId}`)).items as { kind: string; key: string; object_id: string }[];
    expect(bindings.find((binding) => binding.kind === 'product' && binding.key === 'pro')?.object_id).toBe(proId);
    expect(await keysOf(org.organizationId)).toEqual(['benefit:guide', 'benefit:support', 'discount:launch', 'meter:api-calls', 'product:ebook', 'product:pro']);
    const pro = await api(`/v1/products/${proId}`);
    expect(pro.benefits.map((benefit: { description: string }) => benefit.description).sort()).toEqual(['Priority support', 'The PDF guide']);

    const third = await till(['apply', file, '--yes'], env);
    expect(third.exitCode).toBe(0);
    expect(third.stdout).toContain('Nothing to change');
  });
});
