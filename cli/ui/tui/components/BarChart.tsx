import { Box, Text, useStdout } from 'ink';
import { useTheme } from '../theme.js';

export interface Bar {
  label: string;
  value: number;
}

export interface BarChartProps {
  bars: Bar[];
  /** Shown under the bars (e.g. the total over the window). */
  total?: number;
  /** Lines the chart may use (the total takes one); more bars scroll. */
  height: number;
  /** The first bar shown. */
  top: number;
  /** Columns to fill; the terminal's width when absent. */
  width?: number;
}

/** 1234 → 1,234; fractions to four places (as `till meters quantities`). */
export const formatQuantity = (value: number) => (Number.isInteger(value) ? value.toLocaleString('en-US') : value.toLocaleString('en-US', { maximumFractionDigits: 4 }));

/**
 * Cells of a bar scaled to the largest value, as `till meters quantities` draws them: a value above zero too small
 * for one cell still shows (▏), zero shows nothing.
 */
export function barOf(value: number, max: number, cells: number): string {
  const filled = max > 0 ? Math.round((value / max) * cells) : 0;
  return value > 0 && filled === 0 ? '▏' : '█'.repeat(Math.max(0, filled));
}

/** Horizontal bars, one line each (label, bar, value), scaled to the largest bar of all (not only those in view). */
export function BarChart({ bars, total, height, top, width }: BarChartProps) {
  const theme = useTheme();
  const { stdout } = useStdout();
  const columns = width ?? (stdout.columns || 80);
  const max = Math.max(0, ...bars.map((bar) => bar.value));
  const labelWidth = Math.max(5, ...bars.map((bar) => bar.label.length));
  const valueWidth = Math.max(...bars.map((bar) => formatQuantity(bar.value).length), total === undefined ? 0 : formatQuantity(total).length, 1);
  const cells = Math.max(5, columns - labelWidth - valueWidth - 6);
  const visible = Math.max(1, height - (total === undefined ? 0 : 1));
  const first = Math.max(0, Math.min(top, bars.length - visible));
  return (
    <Box flexDirection="column">
      {bars.slice(first, first + visible).map((bar, index) => (
        <Text key={first + index} wrap="truncate-end">
          {bar.label.padEnd(labelWidth)}  <Text color={theme.color('green')}>{barOf(bar.value, max, cells).padEnd(cells)}</Text>  {formatQuantity(bar.value).padStart(valueWidth)}
        </Text>
      ))}
      {total === undefined ? null : (
        <Text bold wrap="truncate-end">
          {'Total'.padEnd(labelWidth)}  {' '.repeat(cells)}  {formatQuantity(total).padStart(valueWidth)}
        </Text>
      )}
    </Box>
  );
}
