/** No request (of /v1 or /api/auth) nests deeper than this; anything deeper is refused rather than walked. */
const MAX_DEPTH = 32;

/** A value met in the walk: where it sits is kept as a link to its parent, and spelled out only for an answer. */
interface Visit {
  value: unknown;
  key: string | number;
  parent: Visit | undefined;
  depth: number;
}

const pathOf = (visit: Visit): (string | number)[] => {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at; at = at.parent) path.push(at.key);
  return path.reverse();
};

/**
 * Finds what the database cannot take: a string or key holding U+0000, or nesting past MAX_DEPTH (iteratively);
 * with `maxTextLength`, also a string or key longer than that. Every request body goes through it (an ingest's
 * thousand events too), so it allocates no path until it has something to report.
 */
export function findUnstorable(
  value: unknown,
  location: string,
  options: { maxTextLength?: number } = {},
): { loc: (string | number)[]; msg: string; type: string } | undefined {
  const max = options.maxTextLength ?? Infinity;
  const overlong = (path: (string | number)[]) => ({ loc: path, msg: `At most ${max} characters`, type: 'string_too_long' });
  const stack: Visit[] = [{ value, key: location, parent: undefined, depth: 1 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const current = visit.value;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return { loc: pathOf(visit), msg: 'Text may not contain the NUL character', type: 'string_nul' };
      if (current.length > max) return overlong(pathOf(visit));
      continue;
    }
    if (!current || typeof current !== 'object') continue;
    if (visit.depth > MAX_DEPTH) return { loc: pathOf(visit), msg: `Nested more than ${MAX_DEPTH} levels deep`, type: 'too_deep' };
    const array = Array.isArray(current);
    for (const key in current) {
      if (!Object.prototype.hasOwnProperty.call(current, key)) continue;
      if (key.includes('\u0000')) return { loc: [...pathOf(visit), key], msg: 'Text may not contain the NUL character', type: 'string_nul' };
      if (key.length > max) return overlong([...pathOf(visit), key.slice(0, 32)]);
      const item = (current as Record<string, unknown>)[key];
      // Only strings and objects can hold something to report: numbers, booleans and nulls are not pushed.
      if (typeof item === 'string' || (item !== null && typeof item === 'object')) stack.push({ value: item, key: array ? Number(key) : key, parent: visit, depth: visit.depth + 1 });
    }
  }
  return undefined;
}
