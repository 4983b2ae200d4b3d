import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestDaemon, type TestDaemon } from './testing/daemon.js';
import { signIn, signUp, TEST_PASSWORD, type SignedIn } from './testing/auth-client.js';
import { createOrganization } from './testing/v1.js';
import { admittedTypes, isValid, propertiesOf, sample, seededRandom, WRONG_TYPED, type JsonSchema, type Random } from './testing/fuzz.js';

/**
 * Malformed requests to every operation: each /v1 operation of /openapi.json and each route of Better Auth at
 * /api/auth gets wrong types, missing required fields, huge strings, NUL and other control characters, ids that name
 * nothing, bad query parameters, malformed JSON and bodies of other content types. An answer fails the test when it
 * is a 5xx, when it carries a stack trace or SQL, or when it is a 2xx to input its operation's schema forbids.
 * The requests derive from a fixed seed: a failure is reproduced by running the file again.
 */

const SEED = 0x7111;
/** Requests in flight at once: enough to keep the daemon busy, few enough for a shared two-core machine. */
const IN_FLIGHT = 4;
/** Longer than any field's bound, shorter than the body limit. */
const HUGE = 'h'.repeat(70_000);
const NUL = 'fu\u0000zz';
/** Control characters that are not NUL, a right-to-left override and markup: valid text for most fields, never a 5xx. */
const CONTROLS = 'fu\u0007\u001b[31mzz\u202e<b>x</b>\u0085';
/** Ids that name nothing, or are no id at all. */
const BAD_IDS = ['nothing-here', '00000000-0000-4000-8000-000000000000', 'a%00b', '%ZZ', 'i'.repeat(5000), '..%2F..%2Fetc', '%F0%9F%92%A5%E2%80%AE', "'%20OR%20'1'%3D'1"];

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url);
  organizationId = await createOrganization(owner, 'Fuzz Org');
});
afterAll(async () => {
  await daemon?.close();
});

interface Probe {
  /** "POST /v1/products" */
  operation: string;
  /** What was malformed, for the report. */
  what: string;
  method: string;
  /** Path and query, already encoded. */
  target: string;
  headers?: Record<string, string>;
  body?: string;
  /** The schema forbids this input: a 2xx is a failure. */
  invalid: boolean;
}

interface Finding {
  probe: Probe;
  status: number;
  text: string;
}

const LEAKS: [string, RegExp][] = [
  ['stack trace', /\bat (async )?[\w$.<>[\] ]+ \(?(file:|node:|\/)[^)\s]*:\d+:\d+/],
  ['stack trace', /node_modules|\.ts:\d+:\d+|\.js:\d+:\d+/],
  ['SQL', /\b(select\s+\S+(\s*,\s*\S+)*\s+from|insert\s+into|delete\s+from|update\s+"?\w+"?\s+set)\b/i],
  ['SQL', /SQLITE_[A-Z]+|violates [\w -]*constraint|invalid input syntax for|syntax error at or near|out of range for type|invalid byte sequence|knex|pg_|relation "\w+"/i],
];

/** The answer's problem, if it has one. */
function judge(probe: Probe, status: number, text: string): string | undefined {
  if (status >= 500) return `answered ${status}`;
  for (const [kind, pattern] of LEAKS) if (pattern.test(text)) return `leaked ${kind}`;
  if (probe.invalid && status >= 200 && status < 300) return `accepted invalid input with ${status}`;
  return undefined;
}

async function sendAll(probes: readonly Probe[], extraHeaders: () => Record<string, string>): Promise<string[]> {
  const problems: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < probes.length) {
      const probe = probes[next++]!;
      let status = 0;
      let text = '';
      let failure: string | undefined;
      // A reset on a kept-alive connection the server was closing as the probe went out (seen once in CI under a load
      // of 11) is the transport's race, not an answer: the probe goes once more, on the fresh connection fetch then
      // opens. An input that really breaks the connection breaks it the second time too.
      for (let attempt = 1; attempt <= 2; attempt++) {
        try {
          const res = await fetch(`${daemon.url}${probe.target}`, {
            method: probe.method,
            headers: { ...extraHeaders(), ...probe.headers },
            body: probe.body,
            redirect: 'manual',
          });
          status = res.status;
          text = await res.text();
          failure = undefined;
          if (process.env.FUZZ_STATS) console.log(`STAT ${status} ${probe.operation} [${probe.what}] ${text.slice(0, 150)}`);
          break;
        } catch (error) {
          const cause = (error as { cause?: { code?: string; message?: string } }).cause;
          failure = `${probe.operation} [${probe.what}] no readable answer: ${cause?.code ?? ''} ${cause?.message ?? String(error)}`;
          if (!['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(cause?.code ?? '')) break;
        }
      }
      if (failure) {
        problems.push(failure);
        continue;
      }
      const problem = judge(probe, status, text);
      if (problem) problems.push(`${probe.operation} [${probe.what}] ${problem}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return problems.sort();
}

interface Operation {
  method: string;
  /** With `{name}` placeholders. */
  path: string;
  pathParams: string[];
  query: { name: string; required: boolean; schema: JsonSchema }[];
  body?: JsonSchema;
  /** A valid body (the document's example): mutations of it reach the operation's work, not only its validation. */
  example?: unknown;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Every malformed request for one operation. */
function probesFor(op: Operation, random: Random, known: Record<string, unknown>): Probe[] {
  const operation = `${op.method.toUpperCase()} ${op.path}`;
  const probes: Probe[] = [];
  const pathWith = (values: Record<string, string>) => op.path.replace(/\{(\w+)\}/g, (_m, name: string) => values[name] ?? 'fuzz-id');
  const baseQuery = Object.fromEntries(op.query.filter((q) => q.required).map((q) => [q.name, String(sample(q.schema, q.schema, known))]));
  const target = (path: string, query: Record<string, string | string[]>) => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) for (const item of [value].flat()) search.append(key, item);
    const text = search.toString();
    return text ? `${path}?${text}` : path;
  };
  const basePath = pathWith({});
  const example =
    op.example && typeof op.example === 'object' && !Array.isArray(op.example)
      ? { ...op.example, ...Object.fromEntries(Object.entries(known).filter(([key]) => key in (op.example as object))) }
      : op.example;
  const baseBody = op.body ? (example ?? sample(op.body, op.body, known)) : undefined;
  const bodyOf = (value: unknown) => (op.body ? { headers: JSON_HEADERS, body: JSON.stringify(value) } : {});

  // Ids that name nothing: never a 2xx.
  for (const name of op.pathParams) {
    for (const bad of BAD_IDS) {
      const path = op.path.replace(/\{(\w+)\}/g, (_m, param: string) => (param === name ? bad : 'fuzz-id'));
      probes.push({ operation, what: `path ${name}=${bad.slice(0, 20)}`, method: op.method, target: target(path, baseQuery), ...bodyOf(baseBody), invalid: true });
    }
  }

  // Query parameters of the wrong type, out of bounds, repeated, huge, with NUL.
  for (const param of op.query) {
    for (const [what, value] of queryMutations(random)) {
      probes.push({
        operation,
        what: `query ${param.name} ${what}`,
        method: op.method,
        target: target(basePath, { ...baseQuery, [param.name]: value }),
        ...bodyOf(baseBody),
        invalid: what === 'NUL' || !queryValid(param.schema, value),
      });
    }
  }

  if (op.body) {
    const schema = op.body;
    const send = (what: string, body: string | undefined, invalid: boolean, headers: Record<string, string> = JSON_HEADERS) =>
      probes.push({ operation, what, method: op.method, target: target(basePath, baseQuery), headers, body, invalid });
    const sendValue = (what: string, value: unknown, forceInvalid = false) => send(what, JSON.stringify(value), forceInvalid || !isValid(schema, schema, value));
    for (const text of ['{"name": ', '{', '{"a": 1,}', "{'single': 'quotes'}", '\u0000', 'NaN']) send(`malformed JSON ${JSON.stringify(text)}`, text, true);
    for (const value of [[], 'text', 42, null, true]) sendValue(`body ${JSON.stringify(value)}`, value);
    send('text/plain body', JSON.stringify(baseBody), true, { 'content-type': 'text/plain' });
    send('form body', 'name=fuzz&organization_id=x', true, { 'content-type': 'application/x-www-form-urlencoded' });
    send('XML body', '<fuzz/>', true, { 'content-type': 'application/xml' });
    send('body over the limit', JSON.stringify({ name: 'x'.repeat(1_200_000) }), true);
    sendValue('nested 100 deep', { fuzz: JSON.parse('['.repeat(100) + ']'.repeat(100)) }, true);
    sendValue('NUL in a key', { ...(baseBody as object), ['k\u0000ey']: 1 }, true);

    if (baseBody && typeof baseBody === 'object' && !Array.isArray(baseBody)) {
      const { properties, required } = propertiesOf(schema, schema);
      for (const [name, property] of Object.entries(properties)) {
        const base = baseBody as Record<string, unknown>;
        const withValue = (value: unknown) => ({ ...base, [name]: value });
        if (required.includes(name)) {
          const { [name]: _dropped, ...rest } = base;
          sendValue(`without ${name}`, rest);
        }
        const admitted = admittedTypes(schema, property);
        const wrong = WRONG_TYPED.filter((value) => admitted && !admitted.has(valueType(value)));
        if (wrong.length) sendValue(`${name} of the wrong type`, withValue(random.pick(wrong)));
        if (!admitted || admitted.has('string')) {
          sendValue(`${name} huge`, withValue(HUGE));
          sendValue(`${name} with NUL`, withValue(NUL), true);
          sendValue(`${name} with control characters`, withValue(CONTROLS));
        }
        if (admitted?.has('integer') || admitted?.has('number')) {
          for (const value of [Number.MAX_SAFE_INTEGER, -(2 ** 31), 1e300, 0.5]) sendValue(`${name}=${value}`, withValue(value));
        }
        if (admitted?.has('array')) sendValue(`${name} with 10,000 items`, withValue(Array.from({ length: 10_000 }, () => 'fuzz')));
      }
    }
  }
  return probes;
}

const valueType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value);

/** Query values worth sending for a parameter of this schema: [description, value(s)]. */
function queryMutations(random: Random): [string, string | string[]][] {
  const candidates: [string, string | string[]][] = [
    ['huge', 'q'.repeat(8000)],
    ['empty', ''],
    ['blank', ' '],
    ['repeated', ['1', 'fuzz']],
    ['control characters', CONTROLS],
    ['not a number', 'abc'],
    ['not a date', '2026-13-45T99:99'],
    ['not a boolean', 'maybe'],
    ...['-1', '0', '99999999999999999999', '1.5', '1e400', '0x10'].map((value): [string, string] => [`=${value}`, value]),
  ];
  // NUL always; five of the rest, drawn from the seed (every parameter of every operation gets its own draw).
  const drawn = new Set<number>();
  while (drawn.size < 5) drawn.add(random.int(candidates.length));
  return [['NUL', 'a\u0000b'], ...[...drawn].map((index) => candidates[index]!)];
}

/** Whether a query value can be read as a value of its schema (a string, a number, a boolean, or a list of them). */
function queryValid(schema: JsonSchema, value: string | string[]): boolean {
  const readings = (text: string): unknown[] => [
    text,
    ...(text.trim() !== '' && Number.isFinite(Number(text)) ? [Number(text)] : []),
    ...(text === 'true' || text === 'false' ? [text === 'true'] : []),
  ];
  const read = (text: string, kind: number) => readings(text)[Math.min(kind, readings(text).length - 1)];
  if (Array.isArray(value)) return [0, 1, 2].some((kind) => isValid(schema, schema, value.map((text) => read(text, kind))));
  return readings(value).some((reading) => isValid(schema, schema, reading) || isValid(schema, schema, [reading]));
}

// ─── /v1: every operation of the published document ────────────────────────────────────────────────────────────

interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

async function v1Operations(): Promise<Operation[]> {
  const res = await fetch(`${daemon.url}/openapi.json`);
  expect(res.status).toBe(200);
  const document = (await res.json()) as {
    paths: Record<string, Record<string, { parameters?: OpenApiParameter[]; requestBody?: { content: { 'application/json': { schema: JsonSchema; example?: unknown } } } }>>;
    components?: { schemas?: Record<string, JsonSchema> };
  };
  // Each schema carries the document's components, so that its references resolve.
  const withComponents = (schema: JsonSchema | undefined) => schema && { ...schema, components: document.components };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const parameters = op.parameters ?? [];
      operations.push({
        method,
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: p.required, schema: withComponents(p.schema)! })),
        body: withComponents(op.requestBody?.content['application/json'].schema),
        example: op.requestBody?.content['application/json'].example,
      });
    }
  }
  return operations;
}

// ─── /api/auth: every route Better Auth serves ─────────────────────────────────────────────────────────────────

interface AuthEndpoint {
  path: string;
  options?: { method?: string | string[]; body?: z.ZodType; query?: z.ZodType };
}

const toJsonSchema = (schema: z.ZodType | undefined): JsonSchema | undefined => {
  if (!schema) return undefined;
  try {
    return z.toJSONSchema(schema, {
      io: 'input',
      unrepresentable: 'any',
      target: 'openapi-3.0',
      // Better Auth coerces some fields (z.coerce.string() ids, z.coerce.boolean() flags): they take any value.
      override: ({ zodSchema, jsonSchema }) => {
        if ((zodSchema as { _zod?: { def?: { coerce?: boolean } } })._zod?.def?.coerce) for (const key of Object.keys(jsonSchema)) delete (jsonSchema as Record<string, unknown>)[key];
      },
    }) as JsonSchema;
  } catch {
    return {};
  }
};

function authOperations(): Operation[] {
  const operations: Operation[] = [];
  for (const endpoint of Object.values(daemon.auth.api as unknown as Record<string, AuthEndpoint>)) {
    if (!endpoint?.path) continue;
    const methods = [endpoint.options?.method ?? 'GET'].flat();
    const method = methods.includes('POST') && endpoint.options?.body ? 'POST' : methods[0]!;
    const querySchema = toJsonSchema(endpoint.options?.query);
    const { properties, required } = querySchema ? propertiesOf(querySchema, querySchema) : { properties: {}, required: [] as string[] };
    operations.push({
      method,
      path: `/api/auth${endpoint.path.replace(/:(\w+)/g, '{$1}')}`,
      pathParams: [...endpoint.path.matchAll(/:(\w+)/g)].map((m) => m[1]!),
      query: Object.entries(properties).map(([name, schema]) => ({ name, required: required.includes(name), schema })),
      body: method === 'POST' ? (toJsonSchema(endpoint.options?.body) ?? { type: 'object' }) : undefined,
    });
  }
  return operations;
}

describe('malformed requests', () => {
  it('to every /v1 operation answer without a 5xx, a stack trace or SQL, and never accept what the schema forbids', async () => {
    const operations = await v1Operations();
    expect(operations.length).toBeGreaterThan(100);
    const random = seededRandom(SEED);
    const probes = operations.flatMap((op) => probesFor(op, random, { organization_id: organizationId }));
    const problems = await sendAll(probes, () => ({ authorization: `Bearer ${owner.token}` }));
    expect(problems).toEqual([]);
    // Thousands of requests one after another: 20-40 s on a quiet machine, over 120 s at a load of 16 (CI may be busy).
  }, 400_000);

  it('to every /api/auth route answer without a 5xx, a stack trace or SQL, and never accept what the schema forbids', async () => {
    const operations = authOperations();
    expect(operations.length).toBeGreaterThan(80);
    const random = seededRandom(SEED + 1);
    let session = owner;
    const headers = () => ({ origin: daemon.url, cookie: [...session.client.jar].map(([k, v]) => `${k}=${v}`).join('; ') });
    // Routes that may end the caller's session even for odd input run last, one at a time, each with a live session.
    const endsSessions = (op: Operation) => /sign-out|revoke|delete-user|impersonat|ban-user|remove-user|password|leave/.test(op.path);
    const problems = await sendAll(
      operations.filter((op) => !endsSessions(op)).flatMap((op) => probesFor(op, random, {})),
      headers,
    );
    for (const op of operations.filter(endsSessions)) {
      const alive = await session.client.get('/get-session', { disableCookieCache: 'true' });
      if (alive.status !== 200 || !alive.body) session = await signIn(daemon.url, owner.user.email, TEST_PASSWORD);
      problems.push(...(await sendAll(probesFor(op, random, {}), headers)));
    }
    expect(problems).toEqual([]);
  }, 400_000);
});
