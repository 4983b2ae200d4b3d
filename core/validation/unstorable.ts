/** No request (of /v1 or /api/auth) nests deeper than this; anything deeper is refused rather than walked. */
const MAX_DEPTH = 32;

/**
 * Finds what the database cannot take: a string or key holding U+0000, or nesting past MAX_DEPTH (iteratively);
 * with `maxTextLength`, also a string or key longer than that.
 */
export function findUnstorable(
  value: unknown,
  location: string,
  options: { maxTextLength?: number } = {},
): { loc: (string | number)[]; msg: string; type: string } | undefined {
  const max = options.maxTextLength ?? Infinity;
  const overlong = (path: (string | number)[]) => ({ loc: path, msg: `At most ${max} characters`, type: 'string_too_long' });
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [location] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return { loc: path, msg: 'Text may not contain the NUL character', type: 'string_nul' };
      if (current.length > max) return overlong(path);
      continue;
    }
    if (!current || typeof current !== 'object') continue;
    if (path.length > MAX_DEPTH) return { loc: path, msg: `Nested more than ${MAX_DEPTH} levels deep`, type: 'too_deep' };
    for (const [key, item] of Object.entries(current)) {
      if (key.includes('\u0000')) return { loc: [...path, key], msg: 'Text may not contain the NUL character', type: 'string_nul' };
      if (key.length > max) return overlong([...path, key.slice(0, 32)]);
      stack.push({ value: item, path: [...path, Array.isArray(current) ? Number(key) : key] });
    }
  }
  return undefined;
}
