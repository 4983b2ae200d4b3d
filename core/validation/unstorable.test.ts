import { describe, expect, it } from 'vitest';
import { findUnstorable } from './unstorable.js';

describe('findUnstorable', () => {
  it('passes a body of events the database can take', () => {
    const events = Array.from({ length: 50 }, (_, i) => ({ name: 'api_call', external_id: `e-${i}`, metadata: { tokens: i, large: i % 2 === 0, model: null } }));
    expect(findUnstorable({ events }, 'body')).toBeUndefined();
  });

  it('names where a NUL character sits, in a value (array positions as numbers) or in a key', () => {
    const body = { events: [{ name: 'ok' }, { name: 'ok', metadata: { model: 'a\u0000b' } }] };
    expect(findUnstorable(body, 'body')).toEqual({ loc: ['body', 'events', 1, 'metadata', 'model'], msg: 'Text may not contain the NUL character', type: 'string_nul' });
    expect(findUnstorable({ events: [{ metadata: { 'k\u0000': 1 } }] }, 'body')?.loc).toEqual(['body', 'events', 0, 'metadata', 'k\u0000']);
  });

  it('refuses nesting past 32 levels, and takes 32', () => {
    const nested = (levels: number) => {
      let value: unknown = 'leaf';
      for (let i = 0; i < levels; i++) value = { a: value };
      return value;
    };
    expect(findUnstorable(nested(31), 'body')).toBeUndefined();
    const deep = findUnstorable(nested(40), 'body');
    expect(deep?.type).toBe('too_deep');
    expect(deep?.loc).toHaveLength(33);
  });

  it('with a maximum, refuses a longer string or key', () => {
    expect(findUnstorable({ a: ['x'.repeat(11)] }, 'body', { maxTextLength: 10 })).toEqual({ loc: ['body', 'a', 0], msg: 'At most 10 characters', type: 'string_too_long' });
    expect(findUnstorable({ ['k'.repeat(40)]: 1 }, 'body', { maxTextLength: 10 })?.loc).toEqual(['body', 'k'.repeat(32)]);
    expect(findUnstorable({ a: 'x'.repeat(10) }, 'body', { maxTextLength: 10 })).toBeUndefined();
  });
});
