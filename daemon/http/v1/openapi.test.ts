import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../testing/daemon.js';
import { signUp, type SignedIn } from '../../testing/auth-client.js';
import { createOrganization, v1Request } from '../../testing/v1.js';
import { isValid, type JsonSchema } from '../../testing/fuzz.js';
import type { OpenApiDocument } from './openapi.js';
import generated from './responses.generated.json' with { type: 'json' };

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let document: OpenApiDocument;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url);
  organizationId = await createOrganization(owner, 'Docs Org');
  document = (await (await fetch(`${daemon.url}/openapi.json`)).json()) as OpenApiDocument;
});
afterAll(async () => {
  await daemon?.close();
});

const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));

/** Every `$ref` in a value. */
function references(value: unknown): string[] {
  const found: string[] = [];
  JSON.stringify(value, (key, item) => {
    if (key === '$ref') found.push(item as string);
    return item;
  });
  return found;
}

/** The schema of an operation's success answer. */
function answerSchema(method: string, path: string): { status: string; schema: JsonSchema } {
  const responses = document.paths[path]![method]!.responses;
  const [status, response] = Object.entries(responses).find(([code]) => code.startsWith('2'))!;
  return { status, schema: (response.content?.['application/json']?.schema ?? {}) as JsonSchema };
}

const root = () => document as unknown as JsonSchema;

describe('/openapi.json', () => {
  it('is a sound OpenAPI 3.0 document: unique operation ids, declared path parameters, tags, every reference resolving', () => {
    expect(document.openapi).toBe('3.0.3');
    const ids = operations().map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set(document.tags.map((tag) => tag.name));
    for (const { path, method, operation } of operations()) {
      const declared = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort();
      expect([method, path, declared]).toEqual([method, path, [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()]);
      expect(tags.has(operation.tags[0]!)).toBe(true);
      expect(Object.keys(operation.responses).some((code) => code.startsWith('2'))).toBe(true);
      for (const [code, response] of Object.entries(operation.responses)) expect([method, path, code, typeof response.description]).toEqual([method, path, code, 'string']);
    }
    const unresolved = references(document).filter((target) => !(target.startsWith('#/components/schemas/') && target.slice(21) in document.components.schemas));
    expect([...new Set(unresolved)]).toEqual([]);
  });

  it('gives every example that its schema takes', () => {
    for (const { path, method, operation } of operations()) {
      for (const [code, response] of Object.entries(operation.responses)) {
        const content = response.content?.['application/json'];
        if (content) expect([method, path, code, isValid(root(), content.schema as JsonSchema, content.example)]).toEqual([method, path, code, true]);
      }
    }
  });

  it('describes the answer of every operation @polar-sh/sdk has, and the file it comes from is not stale', async () => {
    const known = new Set(Object.keys((generated as { operations: object }).operations));
    const missing = operations()
      .filter(({ path, method }) => known.has(`${method.toUpperCase()} ${path}`))
      .filter(({ path, method }) => {
        const { status, schema } = answerSchema(method, path);
        return status !== '204' && !schema.$ref;
      });
    expect(missing.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
    // Most operations are the SDK's; the rest (the test clock, the catalog keys…) are Till's own.
    expect(operations().filter(({ path, method }) => known.has(`${method.toUpperCase()} ${path}`)).length).toBeGreaterThan(80);
    const regenerated = await execa('node', [join(import.meta.dirname, '../../../scripts/openapi-responses.mjs'), '--check'], { reject: false });
    expect([regenerated.exitCode, regenerated.stderr]).toEqual([0, '']);
  });

  it("describes the answer of every operation, Till's own too: none is left as a bare object", () => {
    const bare = operations().filter(({ path, method }) => JSON.stringify(answerSchema(method, path).schema) === JSON.stringify({ type: 'object' }));
    expect(bare.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
    // The customer portal's routes take a customer session, the others a session or an organization token.
    for (const { path, operation } of operations()) {
      if ((operation as { security: unknown[] }).security.length === 0) continue;
      expect([path, (operation as { security: unknown[] }).security]).toEqual([path, [path.startsWith('/v1/customer-portal/') ? { customer_session: [] } : { bearer: [] }]]);
    }
    // An answer without a body says so.
    expect(document.paths['/v1/orders/{id}/invoice']!.post!.responses['202']).toEqual({ description: 'Accepted (no body)' });
  });

  it('describes what the operations answer: a real answer of each kind matches its schema', async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await v1Request(daemon.url, owner.token, method, path, body);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    const checked: string[] = [];
    const check = async (method: string, template: string, path: string, body?: unknown) => {
      const answer = await call(method, path, body);
      const { status, schema } = answerSchema(method.toLowerCase(), template);
      expect([method, path, answer.status]).toEqual([method, path, Number(status)]);
      if (status !== '204') expect([method, template, isValid(root(), schema, answer.body)]).toEqual([method, template, true]);
      checked.push(`${method} ${template}`);
      return answer.body;
    };

    // Create, get, list, update and delete, across the main resources.
    const product = await check('POST', '/v1/products', '/products/', {
      organization_id: organizationId,
      name: 'Docs Plan',
      recurring_interval: 'month',
      prices: [{ amount_type: 'fixed', price_amount: 1200, price_currency: 'usd' }],
    });
    await check('GET', '/v1/products/{id}', `/products/${product.id}`);
    await check('GET', '/v1/products', '/products/');
    await check('PATCH', '/v1/products/{id}', `/products/${product.id}`, { description: 'Described' });
    const customer = await check('POST', '/v1/customers', '/customers/', { organization_id: organizationId, email: 'docs@example.com', name: 'Docs Buyer' });
    await check('GET', '/v1/customers/{id}', `/customers/${customer.id}`);
    await check('GET', '/v1/customers', '/customers/');
    await check('PATCH', '/v1/customers/{id}', `/customers/${customer.id}`, { name: 'Docs Buyer Two' });
    await check('GET', '/v1/customers/{id}/state', `/customers/${customer.id}/state`);
    const discount = await check('POST', '/v1/discounts', '/discounts/', { organization_id: organizationId, name: 'Docs 10', type: 'percentage', basis_points: 1000, duration: 'once' });
    await check('GET', '/v1/discounts', '/discounts/');
    await check('DELETE', '/v1/discounts/{id}', `/discounts/${discount.id}`);
    await check('POST', '/v1/benefits', '/benefits/', { organization_id: organizationId, type: 'custom', description: 'Docs perk', properties: { note: 'Thanks' } });
    await check('GET', '/v1/benefits', '/benefits/');
    await check('POST', '/v1/meters', '/meters/', {
      organization_id: organizationId,
      name: 'Docs calls',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'call' }] },
      aggregation: { func: 'count' },
    });
    await check('GET', '/v1/meters', '/meters/');
    const checkout = await check('POST', '/v1/checkouts', '/checkouts/', { products: [product.id] });
    await check('GET', '/v1/checkouts/{id}', `/checkouts/${checkout.id}`);
    await check('GET', '/v1/checkouts/client/{client_secret}', `/checkouts/client/${checkout.client_secret}`);
    await check('POST', '/v1/webhooks/endpoints', '/webhooks/endpoints', { organization_id: organizationId, url: 'https://example.com/hook', format: 'raw', events: ['order.created'] });
    await check('GET', '/v1/webhooks/endpoints', '/webhooks/endpoints');
    await check('GET', '/v1/organizations/{id}', `/organizations/${organizationId}`);
    await check('GET', '/v1/organizations', '/organizations/');
    const minted = await check('POST', '/v1/organization-access-tokens', '/organization-access-tokens/', { organization_id: organizationId, comment: 'docs', scopes: ['products:read'] });
    await check('GET', '/v1/organization-access-tokens', '/organization-access-tokens/');
    await check('PATCH', '/v1/organization-access-tokens/{id}', `/organization-access-tokens/${minted.organization_access_token.id}`, { comment: 'docs two' });
    const current = await v1Request(daemon.url, minted.token, 'GET', '/organization-access-tokens/current');
    expect(isValid(root(), answerSchema('get', '/v1/organization-access-tokens/current').schema, await current.json())).toBe(true);
    const rate = await check('POST', '/v1/tax-rates', '/tax-rates/', { organization_id: organizationId, country: 'DE', basis_points: 1900 });
    await check('GET', '/v1/tax-rates/{id}', `/tax-rates/${rate.id}`);
    await check('GET', '/v1/tax-rates', '/tax-rates/');
    await check('GET', '/v1/orders', '/orders/');
    await check('GET', '/v1/subscriptions', '/subscriptions/');
    await check('POST', '/v1/events/ingest', '/events/ingest', { events: [{ name: 'call', customer_id: customer.id }] });
    await check('GET', '/v1/events', '/events/');
    // Till's own operations, described by their own zod schemas.
    await check('PATCH', '/v1/organizations/{id}/clock', `/organizations/${organizationId}/clock`, { sandbox: true });
    await check('POST', '/v1/organizations/{id}/clock/advance', `/organizations/${organizationId}/clock/advance`, { by: '+1d' });
    await check('GET', '/v1/organizations/{id}/clock', `/organizations/${organizationId}/clock`);
    await check('GET', '/v1/organizations/{id}/payment-mode', `/organizations/${organizationId}/payment-mode`);
    await check('GET', '/v1/catalog/schema.json', '/catalog/schema.json');
    await check('POST', '/v1/catalog/keys', '/catalog/keys', { organization_id: organizationId, kind: 'product', key: 'docs-plan', object_id: product.id });
    expect(await check('GET', '/v1/catalog/keys', `/catalog/keys?organization_id=${organizationId}`)).toMatchObject({ items: [{ key: 'docs-plan', object_id: product.id }] });
    expect(checked.length).toBeGreaterThan(25);
    // The check has teeth: an answer without its id, or with a price of the wrong type, does not match.
    const { schema } = answerSchema('get', '/v1/products/{id}');
    const good = (await call('GET', `/products/${product.id}`)).body;
    expect(isValid(root(), schema, good)).toBe(true);
    const { id: _id, ...withoutId } = good;
    expect(isValid(root(), schema, withoutId)).toBe(false);
    expect(isValid(root(), schema, { ...good, prices: [{ ...good.prices[0], price_amount: 'twelve' }] })).toBe(false);
  });
});

describe('/docs', () => {
  it('has a table of contents by tag and an anchor per operation, with its scopes, shapes and the error bodies', async () => {
    const res = await fetch(`${daemon.url}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const { operation } of operations()) {
      expect(html).toContain(`id="${operation.operationId}"`);
      expect(html).toContain(`href="#${operation.operationId}"`);
    }
    for (const tag of document.tags) expect(html).toContain(`id="tag-${tag.name}"`);
    expect(html).toContain('id="errors"');
    expect(html).toContain('id="schema-ValidationError"');
    expect(html).toContain('id="schema-Product"');
    // The product answer's fields, linked to the schemas they use.
    expect(html).toContain('<code>prices</code>');
    expect(html).toContain('<code>products:write</code>');
  });
});
