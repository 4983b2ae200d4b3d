/**
 * What the fuzz test (daemon/fuzz.test.ts) needs from a JSON Schema (OpenAPI 3.0 flavour, as zod writes it): a
 * plausible value to start from, the mutations of it worth sending, and whether a value is valid — decided here
 * independently of zod, from the published schema, so "the server accepted what its own document forbids" can be seen.
 */

export interface JsonSchema {
  type?: string | string[];
  nullable?: boolean;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  not?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema | JsonSchema[];
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  multipleOf?: number;
  $ref?: string;
  definitions?: Record<string, JsonSchema>;
  $defs?: Record<string, JsonSchema>;
  /** A whole OpenAPI document as the root: `#/components/schemas/…` references resolve in it. */
  components?: { schemas?: Record<string, JsonSchema> };
}

/** A small deterministic generator (mulberry32): the same seed sends the same requests. */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (below: number) => Math.floor(next() * below),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}
export type Random = ReturnType<typeof seededRandom>;

/** Resolves `#/definitions/…`, `#/$defs/…` and `#/components/schemas/…` references against `root`. */
export function resolver(root: JsonSchema) {
  return (schema: JsonSchema): JsonSchema => {
    let current = schema;
    for (let hops = 0; current.$ref && hops < 10; hops++) {
      const [, where, name] = /^#\/(definitions|\$defs|components\/schemas)\/(.+)$/.exec(current.$ref) ?? [];
      const table = where === 'definitions' ? root.definitions : where === '$defs' ? root.$defs : root.components?.schemas;
      const target = name ? table?.[decodeURIComponent(name)] : undefined;
      if (!target) return {};
      current = target;
    }
    return current;
  };
}

const typesOf = (schema: JsonSchema): string[] | undefined => {
  const types = schema.type === undefined ? undefined : Array.isArray(schema.type) ? [...schema.type] : [schema.type];
  if (types && schema.nullable) types.push('null');
  return types;
};

const jsonType = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value === 'number' ? 'number' : typeof value;

/** Lenient checks of formats: a value failing one is certainly not of the format (a passing one may still be refused). */
const FORMATS: Record<string, (value: string) => boolean> = {
  email: (value) => /^[^@\s]+@[^@\s]+$/.test(value),
  uuid: (value) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value),
  'date-time': (value) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)),
  date: (value) => /^\d{4}-\d{2}-\d{2}$/.test(value),
  uri: (value) => URL.canParse(value),
  ipv4: (value) => /^\d{1,3}(\.\d{1,3}){3}$/.test(value),
  ipv6: (value) => value.includes(':'),
};

/** Whether `value` is valid by `schema` (JSON Schema's rules; unknown keywords and formats are not checked). */
export function isValid(root: JsonSchema, schema: JsonSchema, value: unknown): boolean {
  const resolve = resolver(root);
  const check = (raw: JsonSchema, current: unknown, depth: number): boolean => {
    if (depth > 64) return true;
    const s = resolve(raw);
    if (current === null && s.nullable) return true;
    if (s.allOf && !s.allOf.every((part) => check(part, current, depth + 1))) return false;
    if (s.anyOf && !s.anyOf.some((part) => check(part, current, depth + 1))) return false;
    if (s.oneOf && s.oneOf.filter((part) => check(part, current, depth + 1)).length !== 1) return false;
    if (s.not && check(s.not, current, depth + 1)) return false;
    if (s.const !== undefined && JSON.stringify(s.const) !== JSON.stringify(current)) return false;
    if (s.enum && !s.enum.some((option) => JSON.stringify(option) === JSON.stringify(current))) return false;
    const types = typesOf(s);
    const actual = jsonType(current);
    if (types && !types.includes(actual) && !(actual === 'integer' && types.includes('number'))) return false;
    if (typeof current === 'string') {
      const length = [...current].length;
      if (s.minLength !== undefined && length < s.minLength) return false;
      if (s.maxLength !== undefined && length > s.maxLength) return false;
      if (s.pattern !== undefined && !safePattern(s.pattern, current)) return false;
      if (s.format && FORMATS[s.format] && !FORMATS[s.format]!(current)) return false;
    }
    if (typeof current === 'number') {
      if (s.minimum !== undefined && (s.exclusiveMinimum === true ? current <= s.minimum : current < s.minimum)) return false;
      if (s.maximum !== undefined && (s.exclusiveMaximum === true ? current >= s.maximum : current > s.maximum)) return false;
      if (typeof s.exclusiveMinimum === 'number' && current <= s.exclusiveMinimum) return false;
      if (typeof s.exclusiveMaximum === 'number' && current >= s.exclusiveMaximum) return false;
    }
    if (Array.isArray(current)) {
      if (s.minItems !== undefined && current.length < s.minItems) return false;
      if (s.maxItems !== undefined && current.length > s.maxItems) return false;
      const tuple = s.prefixItems ?? (Array.isArray(s.items) ? s.items : undefined);
      if (tuple && !tuple.every((part, index) => index >= current.length || check(part, current[index], depth + 1))) return false;
      const rest = tuple ? undefined : (s.items as JsonSchema | undefined);
      if (rest && !current.every((item) => check(rest, item, depth + 1))) return false;
    }
    if (actual === 'object') {
      const object = current as Record<string, unknown>;
      if (s.required && !s.required.every((key) => key in object)) return false;
      for (const [key, item] of Object.entries(object)) {
        const property = s.properties?.[key];
        if (property) {
          if (!check(property, item, depth + 1)) return false;
        } else if (s.additionalProperties === false) {
          return false;
        } else if (typeof s.additionalProperties === 'object' && !check(s.additionalProperties, item, depth + 1)) {
          return false;
        }
      }
    }
    return true;
  };
  return check(schema, value, 0);
}

function safePattern(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return true;
  }
}

const SAMPLE_FORMATS: Record<string, string> = {
  email: 'fuzz@example.test',
  uuid: '00000000-0000-4000-8000-000000000000',
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  uri: 'https://example.test/fuzz',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

/**
 * A plausible value of `schema`: its required properties, the first of its choices, numbers and lengths within its
 * bounds. `known` supplies values by property name (an organization the caller reaches). Patterns are not solved.
 */
export function sample(root: JsonSchema, schema: JsonSchema, known: Record<string, unknown> = {}): unknown {
  const resolve = resolver(root);
  const make = (raw: JsonSchema, depth: number): unknown => {
    const s = resolve(raw);
    if (depth > 8) return null;
    if (s.const !== undefined) return s.const;
    if (s.enum?.length) return s.enum.find((option) => option !== null) ?? s.enum[0];
    const choices = s.anyOf ?? s.oneOf;
    if (choices?.length) return make(choices.find((choice) => !isNullOnly(resolve(choice))) ?? choices[0]!, depth + 1);
    if (s.allOf?.length) return make(s.allOf[0]!, depth + 1);
    const type = typesOf(s)?.find((candidate) => candidate !== 'null');
    switch (type) {
      case 'object': {
        const object: Record<string, unknown> = {};
        for (const key of s.required ?? []) object[key] = key in known ? known[key] : make(s.properties?.[key] ?? {}, depth + 1);
        return object;
      }
      case 'array': {
        const item = Array.isArray(s.items) ? undefined : s.items;
        return Array.from({ length: s.minItems ?? 0 }, () => make(item ?? {}, depth + 1));
      }
      case 'integer':
      case 'number': {
        const low = s.minimum ?? (typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1);
        return Math.min(Math.max(low, 1), s.maximum ?? Number.MAX_SAFE_INTEGER);
      }
      case 'boolean':
        return true;
      case 'null':
        return null;
      case 'string':
      default: {
        if (s.format && SAMPLE_FORMATS[s.format]) return SAMPLE_FORMATS[s.format];
        const text = 'fuzz'.padEnd(s.minLength ?? 0, 'z');
        return s.maxLength !== undefined ? text.slice(0, Math.max(s.maxLength, s.minLength ?? 0)) : text;
      }
    }
  };
  return make(schema, 0);
}

const isNullOnly = (schema: JsonSchema) => schema.type === 'null' || (Array.isArray(schema.type) && schema.type.every((type) => type === 'null'));

/** The object's properties, after references, choices (their union) and allOf are followed. */
export function propertiesOf(root: JsonSchema, schema: JsonSchema): { properties: Record<string, JsonSchema>; required: string[] } {
  const resolve = resolver(root);
  const s = resolve(schema);
  const properties: Record<string, JsonSchema> = { ...(s.properties ?? {}) };
  const required = [...(s.required ?? [])];
  for (const part of [...(s.allOf ?? []), ...(s.anyOf ?? []).slice(0, 1), ...(s.oneOf ?? []).slice(0, 1)]) {
    const inner = propertiesOf(root, part);
    Object.assign(properties, inner.properties);
    required.push(...inner.required);
  }
  return { properties, required };
}

/** Values of every JSON type; a mutation picks one the property's schema does not take. */
export const WRONG_TYPED: readonly unknown[] = [123456, 'not-the-right-type', true, [1, 'two'], { nested: { value: 1 } }, null, -1.5];

/** The scalar types a schema admits at its top level (after references and choices); undefined: any. */
export function admittedTypes(root: JsonSchema, schema: JsonSchema): Set<string> | undefined {
  const resolve = resolver(root);
  const s = resolve(schema);
  const choices = s.anyOf ?? s.oneOf;
  if (choices) {
    const union = new Set<string>();
    for (const choice of choices) {
      const inner = admittedTypes(root, choice);
      if (!inner) return undefined;
      inner.forEach((type) => union.add(type));
    }
    if (s.nullable) union.add('null');
    return union;
  }
  if (s.allOf?.length) return admittedTypes(root, s.allOf[0]!);
  if (s.enum) return new Set(s.enum.map(jsonType));
  const types = typesOf(s);
  return types ? new Set(types.includes('number') ? [...types, 'integer'] : types) : undefined;
}
