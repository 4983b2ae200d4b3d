import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../../../daemon/testing/daemon.js';
import { seller, tillJson, type Seller } from '../../testing/catalog.js';
import { till } from '../../testing/till.js';
import { whereClause } from './meters.js';

describe('--where clauses', () => {
  it('reads each operator, == as eq like =', () => {
    expect(whereClause('name=api_call')).toEqual({ property: 'name', operator: 'eq', value: 'api_call' });
    expect(whereClause('name==api_call')).toEqual({ property: 'name', operator: 'eq', value: 'api_call' });
    expect(whereClause('name!=api_call')).toEqual({ property: 'name', operator: 'ne', value: 'api_call' });
    expect(whereClause('tokens>=10')).toEqual({ property: 'tokens', operator: 'gte', value: 10 });
    expect(whereClause('tokens<=10')).toEqual({ property: 'tokens', operator: 'lte', value: 10 });
    expect(whereClause('tokens>10')).toEqual({ property: 'tokens', operator: 'gt', value: 10 });
    expect(whereClause('tokens<10')).toEqual({ property: 'tokens', operator: 'lt', value: 10 });
    expect(whereClause('model~gpt')).toEqual({ property: 'model', operator: 'like', value: 'gpt' });
    expect(whereClause('model!~mini')).toEqual({ property: 'model', operator: 'not_like', value: 'mini' });
    expect(whereClause(' name = api_call ')).toEqual({ property: 'name', operator: 'eq', value: 'api_call' });
  });

  it('refuses a value that starts with an operator instead of storing a filter that cannot match', () => {
    for (const bad of ['name===api_call', 'tokens=>10', 'tokens=<10', 'tokens>>10', 'tokens<>10', 'name!==x', 'model~~gpt', 'name=!=x']) {
      expect(() => whereClause(bad), bad).toThrow(/starts with an operator/);
    }
  });
});

describe('till meters create --where, against a real daemon', () => {
  let daemon: TestDaemon;
  let acme: Seller;
  beforeAll(async () => {
    daemon = await startTestDaemon();
    acme = await seller(daemon, 'Meter Shop');
  });
  afterAll(() => daemon?.close());

  it('stores name==api_call as name eq "api_call"', async () => {
    const meter = await tillJson(['meters', 'create', '--name', 'API calls', '--where', 'name==api_call', '--where', 'tokens>=10', '--aggregate', 'count'], acme.env);
    expect(meter.filter).toEqual({
      conjunction: 'and',
      clauses: [
        { property: 'name', operator: 'eq', value: 'api_call' },
        { property: 'tokens', operator: 'gte', value: 10 },
      ],
    });
  });

  it('exits 5 naming --where, and creates nothing, for name===api_call', async () => {
    const result = await till(['meters', 'create', '--name', 'Typo meter', '--where', 'name===api_call', '--aggregate', 'count', '--json'], acme.env);
    expect(result.exitCode).toBe(5);
    expect(JSON.parse(result.stderr).error).toMatchObject({ code: 'INVALID_FLAG', message: expect.stringContaining('--where') });
    expect((await tillJson(['meters', 'list', '--query', 'Typo'], acme.env)).items).toEqual([]);
  });
});
