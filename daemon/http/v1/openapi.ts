import { z } from 'zod';
import { tillVersion } from '../../../core/version.js';
import type { AnyRoute } from './route.js';
import generated from './responses.generated.json' with { type: 'json' };

/** A JSON Schema as the document holds it (OpenAPI 3.0's dialect). */
export type Schema = Record<string, unknown>;

interface GeneratedResponses {
  /** "GET /v1/products/{id}" → the status and named component of its success answer (null: no body). */
  operations: Record<string, { status: number; component: string | null }>;
  schemas: Record<string, Schema>;
}

/**
 * What each success answer is, as @polar-sh/sdk reads it (Till serves Polar's wire format): generated from the SDK's
 * zod schemas by scripts/openapi-responses.mjs, and checked against real answers in openapi.test.ts.
 */
const RESPONSES = generated as unknown as GeneratedResponses;

const toJsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'openapi-3.0' }) as Schema;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The two error bodies every /v1 operation may answer (daemon/http/errors.ts writes them). */
const ERROR_SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object',
    description: 'Every refusal but invalid input: `error` names the kind (Polar’s name, which the SDK parses), `code` says exactly what.',
    properties: { error: { type: 'string', example: 'ResourceNotFound' }, code: { type: 'string', example: 'PRODUCT_NOT_FOUND' }, detail: { type: 'string', example: 'Product not found' } },
    required: ['error', 'detail'],
  },
  ValidationError: {
    type: 'object',
    description: 'Invalid input (422): one item per problem, `loc` naming where it is (`body`, `query`, `path` or `header`, then the field).',
    properties: {
      error: { type: 'string', enum: ['RequestValidationError'] },
      code: { type: 'string', example: 'VALIDATION_ERROR' },
      detail: {
        type: 'array',
        items: {
          type: 'object',
          properties: { loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } }, msg: { type: 'string' }, type: { type: 'string' } },
          required: ['loc', 'msg', 'type'],
        },
      },
    },
    required: ['error', 'detail'],
  },
};

const ERROR_EXAMPLES = {
  '401': { error: 'Unauthorized', code: 'UNAUTHORIZED', detail: 'Send a session token or an organization access token as Authorization: Bearer …' },
  '403': { error: 'NotPermitted', code: 'INSUFFICIENT_SCOPE', detail: 'This needs one of the scopes: products:read, products:write' },
  '404': { error: 'ResourceNotFound', code: 'NOT_FOUND', detail: 'Not found' },
  '422': { error: 'RequestValidationError', code: 'VALIDATION_ERROR', detail: [{ loc: ['body', 'name'], msg: 'Too small: expected string to have >=3 characters', type: 'too_small' }] },
};

const errorResponse = (status: keyof typeof ERROR_EXAMPLES, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(status === '422' ? 'ValidationError' : 'Error'), example: ERROR_EXAMPLES[status] } },
});

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  tags: string[];
  'x-scopes': readonly string[];
  parameters?: { name: string; in: string; required: boolean; schema: Schema }[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: Schema; example?: unknown } } };
  responses: Record<string, { description: string; content?: { [type in 'application/json' | 'text/csv']?: { schema: Schema; example?: unknown } } }>;
  security: unknown[];
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string }[];
  components: { securitySchemes: unknown; schemas: Record<string, Schema> };
  paths: Record<string, Record<string, OpenApiOperation>>;
}

/** The OpenAPI document of /v1: requests from the routes' zod schemas, answers from the SDK's (see RESPONSES). */
export function openApiDocument(routes: readonly AnyRoute[], serverUrl: string): OpenApiDocument {
  const schemas: Record<string, Schema> = { ...RESPONSES.schemas, ...ERROR_SCHEMAS };
  const paths: Record<string, Record<string, OpenApiOperation>> = {};
  const tags: string[] = [];
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}').replace(/\/$/, '');
    const parameters = [
      ...(route.params ? objectParameters(route.params, 'path') : []),
      ...(route.query ? objectParameters(route.query, 'query') : []),
    ];
    const status = String(route.status ?? 200);
    const prefix = route.operationId.replace(/\W+/g, '_');
    const body = route.body ? hoistDefinitions(toJsonSchema(route.body), prefix, schemas) : undefined;
    const answer =
      route.response === null
        ? undefined
        : route.response === undefined
          ? answerSchema(route.method, path)
          : route.response instanceof z.ZodType
            ? hoistDefinitions(toJsonSchema(route.response), `${prefix}_response`, schemas)
            : ref(route.response.component);
    if (!tags.includes(route.tag)) tags.push(route.tag);
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security: route.public ? [] : route.portal ? [{ customer_session: [] }] : [{ bearer: [] }],
      'x-scopes': route.scopes,
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body, example: exampleOf(body, schemas, 'request') } } } } : {}),
      responses: {
        [status]:
          route.csv
            ? { description: 'A CSV file, streamed', content: { 'text/csv': { schema: { type: 'string' } } } }
            : status === '204' || !answer
            ? { description: status === '202' ? 'Accepted (no body)' : 'Done (no body)' }
            : { description: 'Success', content: { 'application/json': { schema: answer, example: exampleOf(answer, schemas, 'response') } } },
        '401': errorResponse('401', 'Not authenticated (Unauthorized)'),
        '403': errorResponse('403', 'Missing scope or role (NotPermitted)'),
        '404': errorResponse('404', 'Not found, or not yours (ResourceNotFound)'),
        '422': errorResponse('422', 'Invalid input (RequestValidationError)'),
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Till billing API', version: tillVersion(), description: "Polar's public wire format, served by tilld." },
    servers: [{ url: serverUrl }],
    tags: tags.map((name) => ({ name })),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A session token, or an organization access token (till_oat_…)' },
        customer_session: { type: 'http', scheme: 'bearer', description: 'A customer session token (till_cst_…, from POST /v1/customer-sessions): the customer portal’s routes only' },
      },
      schemas,
    },
    paths,
  };
}

/** The success answer's schema from RESPONSES; an operation the SDK does not have is described as an object. */
function answerSchema(method: string, path: string): Schema | undefined {
  const known = RESPONSES.operations[`${method.toUpperCase()} ${path}`];
  if (!known) return { type: 'object' };
  return known.component ? ref(known.component) : undefined;
}

/**
 * zod writes a schema used twice within one body (a meter filter's clauses) as `#/definitions/…` of that body, which
 * means nothing inside a whole document: such definitions move to components under a name of this operation.
 */
function hoistDefinitions(schema: Schema, prefix: string, schemas: Record<string, Schema>): Schema {
  const definitions = schema.definitions as Record<string, Schema> | undefined;
  if (!definitions) return schema;
  const { definitions: _moved, ...rest } = schema;
  const rename = (name: string) => `${prefix}_${name.replace(/^_+/, '')}`;
  const rewrite = <T>(value: T): T =>
    JSON.parse(JSON.stringify(value), (key, item) => (key === '$ref' && typeof item === 'string' && item.startsWith('#/definitions/') ? `#/components/schemas/${rename(item.slice(14))}` : item));
  for (const [name, definition] of Object.entries(definitions)) schemas[rename(name)] = rewrite(definition);
  return rewrite(rest);
}

const EXAMPLE_FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T12:00:00Z',
  date: '2026-01-01',
  email: 'jane@example.com',
  uri: 'https://example.com/',
  uuid: '7b0c2f59-3b6a-4b36-9d3e-0f1d2c3b4a59',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

/**
 * An example value of a schema: its own `example` or `default` where it has one, else the first enum value, a
 * formatted string, the smallest number allowed. A request example holds the required fields; an answer's, every field.
 */
export function exampleOf(schema: Schema, schemas: Record<string, Schema>, side: 'request' | 'response'): unknown {
  const make = (raw: Schema, depth: number, seen: readonly string[]): unknown => {
    let current = raw;
    const name = typeof current.$ref === 'string' ? current.$ref.split('/').pop()! : undefined;
    if (name) {
      if (seen.includes(name) || depth > 12) return null;
      current = schemas[name] ?? {};
      seen = [...seen, name];
    }
    if ('example' in current) return current.example;
    if ('default' in current && current.default !== undefined) return current.default;
    if ('const' in current) return current.const;
    const enumeration = current.enum as unknown[] | undefined;
    if (enumeration?.length) return enumeration.find((value) => value !== null) ?? null;
    const choices = (current.anyOf ?? current.oneOf ?? current.allOf) as Schema[] | undefined;
    if (choices?.length) return make(choices.find((choice) => choice.type !== 'null') ?? choices[0]!, depth + 1, seen);
    const type = Array.isArray(current.type) ? current.type.find((t) => t !== 'null') : current.type;
    switch (type) {
      case 'object': {
        const properties = (current.properties ?? {}) as Record<string, Schema>;
        const required = (current.required ?? []) as string[];
        const keys = side === 'response' ? Object.keys(properties) : required;
        return Object.fromEntries(keys.map((key) => [key, key === 'metadata' ? {} : make(properties[key] ?? {}, depth + 1, seen)]));
      }
      case 'array': {
        const items = current.items as Schema | undefined;
        const count = Math.max(Number(current.minItems ?? 0), side === 'response' && depth < 4 ? 1 : 0);
        return Array.from({ length: count }, () => make(items ?? {}, depth + 1, seen));
      }
      case 'integer':
      case 'number':
        return Math.max(Number(current.minimum ?? 0), 0) || (typeof current.exclusiveMinimum === 'number' ? current.exclusiveMinimum + 1 : 0);
      case 'boolean':
        return false;
      case 'string': {
        const format = current.format as string | undefined;
        if (format && EXAMPLE_FORMATS[format]) return EXAMPLE_FORMATS[format];
        return 'string'.padEnd(Number(current.minLength ?? 0), '-').slice(0, Number(current.maxLength ?? 64) || 64);
      }
      default:
        return null;
    }
  };
  return make(schema, 0, []);
}

function objectParameters(schema: z.ZodType, location: 'path' | 'query') {
  const json = toJsonSchema(schema) as { properties?: Record<string, Schema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    schema: property,
  }));
}
