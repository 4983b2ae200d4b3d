import { describe, expect, it } from 'vitest';
import { sparkline } from './sparkline.js';

describe('sparkline', () => {
  it('draws the lowest value with the shortest block and the highest with the tallest', () => {
    expect(sparkline([0, 7, 14])).toBe('▁▅█');
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7])).toBe('▁▂▃▄▅▆▇█');
  });

  it('averages a long series down to the width asked for', () => {
    expect(sparkline([0, 0, 10, 10], 2)).toBe('▁█');
    expect([...sparkline(Array.from({ length: 365 }, (_, i) => i), 40)]).toHaveLength(40);
  });

  it('draws a flat series level, and nothing for no values', () => {
    expect(sparkline([5, 5, 5])).toBe('▄▄▄');
    expect(sparkline([0, 0])).toBe('▁▁');
    expect(sparkline([])).toBe('');
  });
});
