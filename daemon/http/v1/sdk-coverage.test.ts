import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sdk049Operations } from '../../../scripts/sdk049-operations.mjs';
import { PORTAL_ROUTES, V1_ROUTES } from './router.js';
import { coverage, coverageTable, NOT_SERVED, reasonFor } from './sdk-coverage.js';

const DOC = join(import.meta.dirname, '../../../docs/polar-wire-format.md');
const BEGIN = '<!-- sdk-operations:begin (generated: TILL_WRITE_DOCS=1 npx vitest run daemon/http/v1/sdk-coverage.test.ts) -->';
const END = '<!-- sdk-operations:end -->';

const rows = async () => coverage(await sdk049Operations(), [...V1_ROUTES, ...PORTAL_ROUTES]);

describe('the per-operation table of SDK 0.49', () => {
  it('finds every operation of the SDK with its method and path', async () => {
    const operations = await sdk049Operations();
    expect(operations).toHaveLength(185);
    expect(operations).toContainEqual({ operation: 'products.get', method: 'GET', path: '/v1/products/{id}' });
    expect(operations).toContainEqual({ operation: 'customerPortal.subscriptions.cancel', method: 'DELETE', path: '/v1/customer-portal/subscriptions/{id}' });
    expect(new Set(operations.map((op) => op.operation)).size).toBe(operations.length);
  });

  it('says why of every operation Till does not serve, and keeps no reason for one it serves', async () => {
    const all = await rows();
    expect(all.filter((row) => !row.servedBy && !row.reason).map((row) => row.operation)).toEqual([]);
    expect(all.filter((row) => row.servedBy && reasonFor(row.operation)).map((row) => row.operation)).toEqual([]);
    // A reason for an operation the SDK does not have is a typo.
    const stale = Object.keys(NOT_SERVED).filter((key) => !all.some((row) => (key.endsWith('.') ? row.operation.startsWith(key) : row.operation === key)));
    expect(stale).toEqual([]);
  });

  it('is written in docs/polar-wire-format.md as the SDK and the routes make it', async () => {
    const doc = readFileSync(DOC, 'utf8');
    const start = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    expect(start, 'the table markers of docs/polar-wire-format.md').toBeGreaterThan(-1);
    const table = coverageTable(await rows());
    const next = `${doc.slice(0, start + BEGIN.length)}\n${table}\n${doc.slice(end)}`;
    if (process.env.TILL_WRITE_DOCS === '1') writeFileSync(DOC, next);
    else expect(doc.slice(start + BEGIN.length, end).trim(), 'stale: run with TILL_WRITE_DOCS=1').toBe(table);
  });
});
