import type { Key } from 'ink';

const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/** One key as ink's useInput would have reported it, had it come alone: control characters become their keys. */
function keyOf(character: string): [string, Key] {
  const code = character.codePointAt(0)!;
  if (character === '\r') return ['', { ...NO_KEY, return: true }];
  if (character === '\t') return ['', { ...NO_KEY, tab: true }];
  if (character === '\b') return ['', { ...NO_KEY, backspace: true }];
  if (character === '\x7f') return ['', { ...NO_KEY, delete: true }];
  // Ctrl-letter (Ctrl-S submits a form); \n and the rest of C0 have no key a handler acts on, so they are dropped
  // by every text field as control characters.
  if (code >= 1 && code <= 26 && character !== '\n') return [String.fromCharCode(code + 96), { ...NO_KEY, ctrl: true }];
  return [character, { ...NO_KEY, shift: /^[A-Z]$/.test(character) }];
}

/**
 * Splits what ink reports as one key into the keys it stands for. Keys that arrive in one read (key repeat, a paste,
 * SSH, a loaded machine) reach useInput as one string: ink parses escape sequences out of it, but hands
 * "\x7f\x7f\x7f" or "10%\x13" over whole, as text, with no key flag set, where three Backspaces or a Ctrl-S were
 * meant. Each character of such a chunk becomes its own key here, so every handler sees keys one at a time.
 */
export function splitKeys(input: string, key: Key): [string, Key][] {
  const characters = [...input];
  if (characters.length <= 1 || key.meta || key.ctrl) return [[input, key]];
  return characters.map(keyOf);
}

/** Text typed into a field, without control characters: none may reach the API from a form. */
export const printable = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
