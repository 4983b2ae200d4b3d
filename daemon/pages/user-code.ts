/** Longest user code looked up; Till's are 8 characters, anything far longer is not a code. */
const MAX_USER_CODE_LENGTH = 32;

/**
 * The user code as stored (`ABCD1234`) from what a person typed or pasted: case, spaces and the dash
 * shown by the CLI (`abcd-1234`) do not matter. Empty when nothing code-like is left.
 */
export function normaliseUserCode(input: unknown): string {
  if (typeof input !== 'string') return '';
  const code = input.replace(/[^A-Za-z0-9]/g, '').toUpperCase();
  return code.length <= MAX_USER_CODE_LENGTH ? code : '';
}

/** `ABCD1234` → `ABCD-1234`, the way the terminal shows it. */
export function formatUserCode(code: string): string {
  return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
}
