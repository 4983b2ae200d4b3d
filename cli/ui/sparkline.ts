const TICKS = '▁▂▃▄▅▆▇█';

/**
 * A series as a line of block characters, lowest to highest (all the same height when the series is flat, blank
 * when empty). Longer series are averaged down to `width` cells, so a year by day fits a terminal line.
 */
export function sparkline(values: readonly number[], width = values.length): string {
  if (!values.length || width < 1) return '';
  const cells = values.length <= width ? [...values] : Array.from({ length: width }, (_, i) => {
    const from = Math.floor((i * values.length) / width);
    const to = Math.max(from + 1, Math.floor(((i + 1) * values.length) / width));
    const part = values.slice(from, to);
    return part.reduce((a, b) => a + b, 0) / part.length;
  });
  const min = Math.min(...cells);
  const max = Math.max(...cells);
  if (max === min) return (max === 0 ? TICKS[0]! : TICKS[3]!).repeat(cells.length);
  return cells.map((value) => TICKS[Math.round(((value - min) / (max - min)) * (TICKS.length - 1))]!).join('');
}
