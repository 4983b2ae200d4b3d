/** A value of a form-encoded Stripe request once its bracketed keys are unfolded. */
export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormObject = { [key: string]: FormValue };

/**
 * Unfolds Stripe's form encoding (`metadata[k]=v`, `expand[0]=x`, `a[b][c]=d`) into nested objects; objects whose
 * keys are all indexes become arrays, as Stripe reads them.
 */
export function parseForm(body: string): FormObject {
  const root: FormObject = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const path = splitKey(rawKey);
    let node: FormObject = root;
    path.forEach((part, index) => {
      const key = part === '' ? String(Object.keys(node).length) : part;
      if (index === path.length - 1) {
        node[key] = value;
        return;
      }
      const next = node[key];
      if (typeof next !== 'object' || Array.isArray(next)) node[key] = {};
      node = node[key] as FormObject;
    });
  }
  return arraysFromIndexes(root) as FormObject;
}

function splitKey(key: string): string[] {
  const first = key.indexOf('[');
  if (first < 0) return [key];
  const rest = [...key.slice(first).matchAll(/\[([^\]]*)\]/g)].map((match) => match[1]);
  return [key.slice(0, first), ...rest];
}

function arraysFromIndexes(value: FormValue): FormValue {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const unfolded = Object.fromEntries(keys.map((key) => [key, arraysFromIndexes(value[key])]));
  if (keys.length > 0 && keys.every((key, index) => key === String(index))) return keys.map((key) => unfolded[key]);
  return unfolded;
}

/** The string at `key`, or undefined (a nested value is not a string). */
export const str = (form: FormObject, key: string): string | undefined => (typeof form[key] === 'string' ? (form[key] as string) : undefined);

/** The nested object at `key`, or an empty one. */
export const obj = (form: FormObject, key: string): FormObject => {
  const value = form[key];
  return typeof value === 'object' && !Array.isArray(value) ? value : {};
};

/** A list of strings at `key` (`expand[0]=a&expand[1]=b`, or `expand[]=a`). */
export const list = (form: FormObject, key: string): string[] => {
  const value = form[key];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value === 'string') return [value];
  return [];
};

/** Stripe's booleans arrive as the strings "true" and "false". */
export const bool = (form: FormObject, key: string): boolean | undefined => {
  const value = str(form, key);
  return value === undefined ? undefined : value === 'true';
};

/** Metadata as Stripe keeps it: string values only, an empty string unsets a key. */
export function metadataOf(form: FormObject, current: Record<string, string> = {}): Record<string, string> {
  const next = { ...current };
  const given = form.metadata;
  if (given === '') return {};
  if (typeof given !== 'object' || Array.isArray(given)) return next;
  for (const [key, value] of Object.entries(given)) {
    if (typeof value !== 'string') continue;
    if (value === '') delete next[key];
    else next[key] = value;
  }
  return next;
}
