import { describe, expect, it } from 'vitest';
import type { Key } from 'ink';
import { printable, splitKeys } from './key-chunks.js';

const none = { upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false, return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false, super: false, hyper: false, capsLock: false, numLock: false } satisfies Key;
/** The keys a chunk splits into, as [input, the flags set]. */
const keys = (chunk: string, key: Key = none) =>
  splitKeys(chunk, key).map(([input, flags]) => [input, Object.entries(flags).filter(([, on]) => on).map(([name]) => name).join('+')]);

describe('splitKeys', () => {
  it('leaves a single key as ink reported it', () => {
    expect(splitKeys('a', none)).toEqual([['a', none]]);
    expect(splitKeys('', { ...none, upArrow: true })).toEqual([['', { ...none, upArrow: true }]]);
  });

  it('turns a run of Backspaces (DEL or BS) into that many Backspace keys', () => {
    expect(keys('\x7f\x7f\x7f')).toEqual([['', 'delete'], ['', 'delete'], ['', 'delete']]);
    expect(keys('\b\b')).toEqual([['', 'backspace'], ['', 'backspace']]);
  });

  it('splits mixed text, Enter, Tab and Ctrl-letters into one key each', () => {
    expect(keys('aB\x7f\r\t\x13')).toEqual([['a', ''], ['B', 'shift'], ['', 'delete'], ['', 'return'], ['', 'tab'], ['s', 'ctrl']]);
  });

  it('keeps characters outside the BMP whole', () => {
    expect(keys('a😀')).toEqual([['a', ''], ['😀', '']]);
  });

  it('does not split a chunk ink already recognised as a meta or ctrl key', () => {
    expect(splitKeys('[1;5A', { ...none, meta: true })).toHaveLength(1);
  });
});

describe('printable', () => {
  it('drops every C0 and C1 control character and DEL, keeps the rest', () => {
    expect(printable('La\x7f\x7fun\x00ch\r\n\t\x1b\x9b é😀')).toBe('Launch é😀');
  });
});

describe('the key dispatcher', () => {
  it("commits each key's render before the next key, through the renderer ink itself uses", async () => {
    const { keysFlushRenders } = await import('./keys.js');
    expect(keysFlushRenders()).toBe(true);
  });
});
