import type { Style } from '../output.js';

/** One object for a person: `label  value` lines, nested values as compact JSON, in the API's field order. */
export function renderRecord(record: Record<string, unknown>, style: Style): string {
  const keys = Object.keys(record);
  const width = Math.max(0, ...keys.map((key) => key.length));
  return keys.map((key) => `${style.dim(key.padEnd(width))}  ${describeValue(record[key])}`).join('\n');
}

/** How one value reads in a table cell or a record line. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.length === 0) return '[]';
  return JSON.stringify(value);
}

const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);

/** 1500, "usd" → "15.00 USD": minor units as a person reads them. */
export function formatMoney(minorUnits: number, currency: string): string {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(currency.toLowerCase())) return `${minorUnits} ${code}`;
  return `${(minorUnits / 100).toFixed(2)} ${code}`;
}

/** "2026-11-22T22:57:04.076Z" → "2026-11-22 22:57" (UTC), short enough for a column. */
export const shortDate = (value: unknown) => (typeof value === 'string' && value.length >= 16 ? `${value.slice(0, 10)} ${value.slice(11, 16)}` : describeValue(value));
