import type { Style } from '../output.js';

export interface Column<T> {
  header: string;
  value(item: T): string;
  /** The widest a cell may be on a terminal before it is cut with "…" (default 40). */
  max?: number;
}

const DEFAULT_MAX = 40;

/** Keeps a cell on one line: tabs and newlines would break both layouts. */
const flat = (text: string) => text.replace(/[\t\r\n]+/g, ' ');

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * Rows for a person (a terminal): a bold header and space-aligned columns, long cells cut. Off a terminal, one
 * tab-separated line per row and no header, whole values, for `cut` and `awk` (as gh does).
 */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[], options: { terminal: boolean; style: Style }): string {
  const cells = rows.map((row) => columns.map((column) => flat(column.value(row))));
  if (!options.terminal) return cells.map((line) => line.join('\t')).join('\n');
  const shown = cells.map((line) => line.map((cell, index) => cut(cell, columns[index]!.max ?? DEFAULT_MAX)));
  const widths = columns.map((column, index) => Math.max(column.header.length, ...shown.map((line) => line[index]!.length)));
  // The last column is not padded: no trailing spaces.
  const layout = (line: readonly string[], dress: (text: string) => string = (text) => text) =>
    line.map((cell, index) => dress(index === line.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  ');
  return [layout(columns.map((column) => column.header), options.style.bold), ...shown.map((line) => layout(line))].join('\n');
}
