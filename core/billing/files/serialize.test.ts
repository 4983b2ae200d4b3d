import { describe, expect, it } from 'vitest';
import { sizeReadable } from './serialize.js';

describe('sizeReadable', () => {
  it('writes sizes as Polar does: 1024-based units with one decimal', () => {
    expect(sizeReadable(0)).toBe('0.0 B');
    expect(sizeReadable(500)).toBe('500.0 B');
    expect(sizeReadable(1234)).toBe('1.2 KB');
    expect(sizeReadable(10 * 1024 * 1024)).toBe('10.0 MB');
    expect(sizeReadable(3 * 1024 ** 3)).toBe('3.0 GB');
  });
});
