import { z } from 'zod';
import { tillVersion } from '../../../core/version.js';
import type { AnyRoute } from './route.js';

const toJsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'openapi-3.0' });

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'string' }, detail: {} } } } },
});

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  tags: string[];
  'x-scopes': readonly string[];
  parameters?: { name: string; in: string; required: boolean; schema: unknown }[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: unknown } } };
  responses: Record<string, unknown>;
  security: unknown[];
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  components: unknown;
  paths: Record<string, Record<string, OpenApiOperation>>;
}

/** The OpenAPI document of /v1, generated from the routes' zod schemas. */
export function openApiDocument(routes: readonly AnyRoute[], serverUrl: string): OpenApiDocument {
  const paths: Record<string, Record<string, OpenApiOperation>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const parameters = [
      ...(route.params ? objectParameters(route.params, 'path') : []),
      ...(route.query ? objectParameters(route.query, 'query') : []),
    ];
    const status = String(route.status ?? 200);
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security: route.public ? [] : [{ bearer: [] }],
      'x-scopes': route.scopes,
      ...(parameters.length ? { parameters } : {}),
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: toJsonSchema(route.body) } } } } : {}),
      responses: {
        [status]:
          status === '204'
            ? { description: 'Done' }
            : { description: 'Success', content: { 'application/json': { schema: route.response ? toJsonSchema(route.response) : { type: 'object' } } } },
        '401': errorResponse('Not authenticated (Unauthorized)'),
        '403': errorResponse('Missing scope or role (NotPermitted)'),
        '404': errorResponse('Not found, or not yours (ResourceNotFound)'),
        '422': errorResponse('Invalid input (RequestValidationError, detail: [{loc, msg, type}])'),
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Till billing API', version: tillVersion(), description: "Polar's public wire format, served by tilld." },
    servers: [{ url: serverUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A session token, or an organization access token (till_oat_…)' } } },
    paths,
  };
}

function objectParameters(schema: z.ZodType, location: 'path' | 'query') {
  const json = toJsonSchema(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    schema: property,
  }));
}
