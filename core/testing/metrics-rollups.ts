import type { Executor } from '../db/database.js';
import { KEYS, type RollupTable } from '../metrics/rollup-rows.js';
import { rebuildMetricsRollups } from '../metrics/rollups.js';

const TABLES = Object.keys(KEYS) as RollupTable[];

/**
 * An organization's metrics rollups as comparable text: each table's rows with something in them (a row whose every
 * figure is 0 counts as no row), numbers as numbers whichever way the database returns them, sorted.
 */
export async function metricsRollupRows(db: Executor, organizationId: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of TABLES) {
    const key = new Set(KEYS[table]);
    const rows = (await db(table).where({ organization_id: organizationId })) as Record<string, unknown>[];
    out[table] = rows
      .map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v])))
      .filter((row) => Object.entries(row).some(([k, v]) => !key.has(k) && v !== 0))
      .map((row) => JSON.stringify(row))
      .sort();
  }
  return out;
}

/** What a rebuild from the rows (rebuildMetricsRollups) would hold for the organization, read in a transaction rolled back after. */
export async function rebuiltMetricsRollupRows(db: Executor, organizationId: string): Promise<Record<string, string[]>> {
  const rolledBack = Symbol('rolled back');
  let rows: Record<string, string[]> | undefined;
  await db
    .transaction(async (trx) => {
      await rebuildMetricsRollups(trx, [organizationId]);
      rows = await metricsRollupRows(trx, organizationId);
      throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
  return rows!;
}
