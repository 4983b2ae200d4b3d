import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, dialectOf, type Database } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { compileAggregation, compileFilter, toQuantity } from './compile.js';
import { insertEvents } from './events-repository.js';
import { isClause, isEventField, type Aggregation, type EventMetadata, type Filter, type FilterClause, type StoredEvent } from './schema.js';

// The SQL equivalence table: every operator and aggregation runs on SQLite and (with TILL_TEST_DATABASE_URL) on
// PostgreSQL, over the same events, and must give what the reference below says, which is the documented
// meaning of a meter (core/metering/compile.ts). Same answers as the reference on each database = the same on both.

const ORG = 'org-equivalence';

type Row = { id: string; name: string; source: 'user'; customerId: string | null; externalCustomerId: string | null; metadata: EventMetadata };
const ROWS: Row[] = [
  { id: 'e1', name: 'api', source: 'user', customerId: 'c1', externalCustomerId: null, metadata: { model: 'large', tokens: 10, cached: true, price: 1.5, label: 'a%b' } },
  { id: 'e2', name: 'api', source: 'user', customerId: null, externalCustomerId: 'x1', metadata: { model: 'small', tokens: 25, cached: false, price: 2 } },
  { id: 'e3', name: 'batch', source: 'user', customerId: 'c2', externalCustomerId: null, metadata: { model: 'Large', tokens: '30', cached: 'true' } },
  { id: 'e4', name: 'api', source: 'user', customerId: 'c1', externalCustomerId: null, metadata: {} },
  { id: 'e5', name: 'api_v2', source: 'user', customerId: 'c2', externalCustomerId: null, metadata: { model: 'large-x', tokens: -5, cached: false, label: 'a_b', price: 0.25 } },
  { id: 'e6', name: 'batch', source: 'user', customerId: null, externalCustomerId: 'x2', metadata: { tokens: 0, flag: 't', model: 'zeta' } },
  { id: 'e7', name: 'Api', source: 'user', customerId: 'c3', externalCustomerId: null, metadata: { model: 'small', tokens: 7, cached: true } },
];

// ---- the reference meaning ----
const likeRegex = (value: string) => new RegExp(`^.*${[...value].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}.*$`, 's');
const byteCompare = (a: string, b: string) => (Buffer.from(a) < Buffer.from(b) ? -1 : Buffer.compare(Buffer.from(a), Buffer.from(b)));

function compare<T extends string | number | boolean>(a: T, op: string, b: T): boolean {
  const order = typeof a === 'string' ? byteCompare(a, b as string) : a === b ? 0 : a < b ? -1 : 1;
  return { eq: order === 0, ne: order !== 0, gt: order > 0, gte: order >= 0, lt: order < 0, lte: order <= 0 }[op]!;
}

function referenceClause(row: Row, clause: FilterClause): boolean {
  const { property, operator, value } = clause;
  const asText = typeof value === 'boolean' ? (value ? 't' : 'f') : String(value);
  if (isEventField(property)) {
    const field = { name: row.name, source: row.source, customer_id: row.customerId, external_customer_id: row.externalCustomerId, external_id: null }[property];
    if (typeof value !== 'string' || field === null) return false;
    if (operator === 'like') return likeRegex(value).test(field);
    if (operator === 'not_like') return !likeRegex(value).test(field);
    return compare(field, operator, value);
  }
  const stored = row.metadata[property];
  if (stored === undefined) return false;
  if (operator === 'like') return likeRegex(asText).test(String(stored));
  if (operator === 'not_like') return !likeRegex(asText).test(String(stored));
  if (typeof stored === 'string') return compare(stored, operator, asText);
  if (typeof stored === 'number') return typeof value === 'number' && compare(stored, operator, value);
  return typeof value === 'boolean' && compare(stored, operator, value);
}

function referenceFilter(row: Row, filter: Filter): boolean {
  if (filter.clauses.length === 0) return true;
  const results = filter.clauses.map((item) => (isClause(item) ? referenceClause(row, item) : referenceFilter(row, item)));
  return filter.conjunction === 'and' ? results.every(Boolean) : results.some(Boolean);
}

function referenceAggregation(rows: Row[], aggregation: Aggregation): number {
  if (aggregation.func === 'count') return rows.length;
  if (aggregation.func === 'unique') {
    const values = rows.map((row) =>
      isEventField(aggregation.property) ? ({ name: row.name, source: row.source, customer_id: row.customerId, external_customer_id: row.externalCustomerId, external_id: null } as Record<string, string | null>)[aggregation.property] : row.metadata[aggregation.property] === undefined ? null : String(row.metadata[aggregation.property]),
    );
    return new Set(values.filter((value) => value !== null)).size;
  }
  const numbers = rows.map((row) => row.metadata[aggregation.property]).filter((value): value is number => typeof value === 'number');
  if (numbers.length === 0) return 0;
  if (aggregation.func === 'sum') return numbers.reduce((a, b) => a + b, 0);
  if (aggregation.func === 'max') return Math.max(...numbers);
  if (aggregation.func === 'min') return Math.min(...numbers);
  return numbers.reduce((a, b) => a + b, 0) / numbers.length;
}

// ---- the table ----
const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like', 'not_like'] as const;
const CLAUSE_INPUTS: [string, string | number | boolean][] = [
  ['name', 'api'],
  ['name', 'Api'],
  ['name', 7],
  ['name', 'api_'],
  ['customer_id', 'c1'],
  ['external_customer_id', 'x1'],
  ['model', 'large'],
  ['model', 'small'],
  ['model', '_arge'],
  ['model', 'L%'],
  ['tokens', 10],
  ['tokens', '30'],
  ['tokens', 0],
  ['tokens', true],
  ['cached', true],
  ['cached', false],
  ['cached', 'true'],
  ['flag', true],
  ['label', 'a%b'],
  ['label', '%'],
  ['price', 2],
  ['missing', 'x'],
];
const CLAUSES: FilterClause[] = CLAUSE_INPUTS.flatMap(([property, value]) => OPERATORS.map((operator) => ({ property, operator, value })));
const NESTED: Filter[] = [
  { conjunction: 'and', clauses: [] },
  { conjunction: 'or', clauses: [] },
  { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api' }, { property: 'tokens', operator: 'gte', value: 10 }] },
  { conjunction: 'or', clauses: [{ property: 'name', operator: 'eq', value: 'batch' }, { property: 'cached', operator: 'eq', value: true }] },
  {
    conjunction: 'and',
    clauses: [
      { property: 'name', operator: 'like', value: 'api' },
      { conjunction: 'or', clauses: [{ property: 'model', operator: 'eq', value: 'small' }, { property: 'missing', operator: 'ne', value: 'x' }, { property: 'price', operator: 'lt', value: 1 }] },
    ],
  },
];
const AGGREGATIONS: Aggregation[] = [
  { func: 'count' },
  ...(['sum', 'max', 'min', 'avg'] as const).flatMap((func) => ['tokens', 'price', 'model', 'missing'].map((property) => ({ func, property }))),
  ...['model', 'tokens', 'cached', 'customer_id', 'name', 'missing'].map((property) => ({ func: 'unique' as const, property })),
];

interface Target {
  label: string;
  db: Database;
  close(): Promise<void>;
}

const targets: Target[] = [];

async function seed(db: Database) {
  await migrateToLatest(db);
  await db('organization').insert({ id: ORG, name: 'Equivalence', slug: `equivalence-${Math.random()}`, createdAt: new Date().toISOString() });
  const events: StoredEvent[] = ROWS.map((row, i) => ({
    ...row,
    organizationId: ORG,
    timestamp: new Date(Date.UTC(2026, 0, 1, i)),
    ingestedAt: new Date(Date.UTC(2026, 0, 1, i)),
    externalId: null,
    parentId: null,
  }));
  await insertEvents(db, events);
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'till-compile-'));
  const sqlite = createDatabase({ client: 'sqlite', filename: join(dir, 'till.sqlite') });
  targets.push({ label: 'sqlite', db: sqlite, close: async () => { await sqlite.destroy(); rmSync(dir, { recursive: true, force: true }); } });
  if (process.env.TILL_TEST_DATABASE_URL) {
    const pg: TestDatabase = await createTestDatabase();
    targets.push({ label: 'postgres', db: pg.db, close: () => pg.destroy() });
  }
  for (const target of targets) await seed(target.db);
}, 60_000);
afterAll(async () => {
  for (const target of targets) await target.close();
});

async function matching(db: Database, filter: Filter): Promise<string[]> {
  const compiled = compileFilter(dialectOf(db), filter, 'e');
  const rows = await db('events as e').where('e.organization_id', ORG).whereRaw(compiled.sql, compiled.bindings as Knex.RawBinding[]).orderBy('e.id').select('e.id');
  return rows.map((row) => String(row.id));
}

async function aggregate(db: Database, aggregation: Aggregation, filter: Filter): Promise<number> {
  const compiledFilter = compileFilter(dialectOf(db), filter, 'e');
  const compiled = compileAggregation(dialectOf(db), aggregation, 'e');
  const result = await db.raw(`select ${compiled.sql} as q from events e where e.organization_id = ? and ${compiledFilter.sql}`, [...compiled.bindings, ORG, ...compiledFilter.bindings] as Knex.RawBinding[]);
  const rows: { q: unknown }[] = Array.isArray(result) ? result : result.rows;
  return toQuantity(rows[0]?.q);
}

describe('meter filters and aggregations compiled to SQL', () => {
  it('match the reference meaning for every operator on every kind of property, on each database', async () => {
    for (const target of targets) {
      for (const clause of CLAUSES) {
        const filter: Filter = { conjunction: 'and', clauses: [clause] };
        const expected = ROWS.filter((row) => referenceFilter(row, filter)).map((row) => row.id);
        expect([target.label, clause, await matching(target.db, filter)]).toEqual([target.label, clause, expected]);
      }
    }
  });

  it('combine clauses with and/or and nested groups the same way', async () => {
    for (const target of targets) {
      for (const filter of NESTED) {
        const expected = ROWS.filter((row) => referenceFilter(row, filter)).map((row) => row.id);
        expect([target.label, JSON.stringify(filter), await matching(target.db, filter)]).toEqual([target.label, JSON.stringify(filter), expected]);
      }
    }
  });

  it('aggregate count, sum, max, min, avg and unique as the reference does, filtered or not', async () => {
    const filters: Filter[] = [{ conjunction: 'and', clauses: [] }, { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api' }] }, { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'none' }] }];
    for (const target of targets) {
      for (const filter of filters) {
        const rows = ROWS.filter((row) => referenceFilter(row, filter));
        for (const aggregation of AGGREGATIONS) {
          const actual = await aggregate(target.db, aggregation, filter);
          expect(actual, `${target.label} ${JSON.stringify(aggregation)} ${JSON.stringify(filter)}`).toBeCloseTo(referenceAggregation(rows, aggregation), 9);
        }
      }
    }
  });

  it('gives identical answers on SQLite and PostgreSQL when both are there', async () => {
    if (targets.length < 2) return;
    const [sqlite, pg] = targets;
    for (const clause of CLAUSES) {
      const filter: Filter = { conjunction: 'and', clauses: [clause] };
      expect(await matching(pg!.db, filter), JSON.stringify(clause)).toEqual(await matching(sqlite!.db, filter));
    }
    for (const aggregation of AGGREGATIONS) {
      const filter: Filter = { conjunction: 'or', clauses: [] };
      expect(await aggregate(pg!.db, aggregation, filter)).toBeCloseTo(await aggregate(sqlite!.db, aggregation, filter), 9);
    }
  });
});
