// Writes daemon/http/v1/responses.generated.json: the JSON Schema of each /v1 operation's success answer, as
// @polar-sh/sdk (the client Till's wire format follows) parses it. For every SDK operation the schema its `M.json(...)`
// reads the answer with is turned into JSON Schema (the wire side of the SDK's zod schemas: io "input"), named
// components deduplicated under #/components/schemas. /openapi.json serves them; daemon/http/v1/openapi.test.ts checks
// real answers of every kind of operation against them and fails when this file is stale.
//
//   node scripts/openapi-responses.mjs          (re-run after upgrading @polar-sh/sdk; --check only compares)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { dirname, join } from 'node:path';
import { registry, toJSONSchema } from 'zod/v4/core';

// The SDK's unions (smartUnion: a parse that tries each option) keep their options in a closure: a load hook wraps
// smartUnion so that each union it makes remembers them, and they are written as anyOf of the named options.
register(
  `data:text/javascript,${encodeURIComponent(`
    export async function load(url, context, next) {
      const loaded = await next(url, context);
      if (!url.endsWith('/types/smartUnion.js')) return loaded;
      const source = String(loaded.source).replace('export function smartUnion(options)', 'function smartUnionOf(options)');
      return { ...loaded, source: source + '\\nexport function smartUnion(options) { const union = smartUnionOf(options); union.unionOptions = options; return union; }\\n' };
    }`)}`,
);

const require = createRequire(import.meta.url);
const sdkRoot = join(dirname(require.resolve('@polar-sh/sdk/package.json')), 'dist/esm');
const components = {};
for (const file of readdirSync(join(sdkRoot, 'models/components')).filter((name) => name.endsWith('.js'))) {
  Object.assign(components, await import(`@polar-sh/sdk/models/components/${file}`));
}

const operationExports = {};
for (const file of readdirSync(join(sdkRoot, 'models/operations')).filter((name) => name.endsWith('.js'))) {
  Object.assign(operationExports, await import(`@polar-sh/sdk/models/operations/${file}`));
}
const operationSources = readdirSync(join(sdkRoot, 'models/operations'))
  .filter((name) => name.endsWith('.js'))
  .map((name) => readFileSync(join(sdkRoot, 'models/operations', name), 'utf8'))
  .join('\n');

/** method + path (no trailing slash) → { status, component } from the SDK's funcs. */
const operations = {};
for (const file of readdirSync(join(sdkRoot, 'funcs')).filter((name) => name.endsWith('.js'))) {
  const source = readFileSync(join(sdkRoot, 'funcs', file), 'utf8');
  const path = /pathToFunc\("([^"]+)"/.exec(source)?.[1];
  const method = /method: "([A-Z]+)"/.exec(source)?.[1];
  const answer = /M\.json\((\d+), (?:z\.optional\()?(?:components\.|operations\.)?(\w+)\$inboundSchema/.exec(source);
  const empty = /M\.nil\((\d+)/.exec(source);
  if (!path || !method) continue;
  const key = `${method} ${path.replace(/\/$/, '')}`;
  if (!answer) {
    if (empty) operations[key] = { status: Number(empty[1]), component: null };
    continue;
  }
  let component = answer[2];
  const operationSchema = operationExports[`${component}$inboundSchema`];
  if (!(`${component}$inboundSchema` in components) && operationSchema?.unionOptions) {
    // An answer that is one of several components (the events list: flat or with children) is a component itself.
    components[`${component}$inboundSchema`] = operationSchema;
  }
  if (!(`${component}$inboundSchema` in components)) {
    // A list's operation schema wraps the component: { Result: ListResourceX }.
    const at = operationSources.indexOf(`export const ${component}$inboundSchema`);
    const inner = at >= 0 ? /Result: (?:components\.)?(\w+)\$inboundSchema/.exec(operationSources.slice(at, at + 2000)) : null;
    if (!inner) continue;
    component = inner[1];
  }
  operations[key] = { status: Number(answer[1]), component };
}

// Every component the answers name, each once, referenced by name.
const names = registry();
for (const [name, schema] of Object.entries(components)) {
  if (name.endsWith('$inboundSchema') && schema && typeof schema === 'object' && '_zod' in schema) names.add(schema, { id: name.slice(0, -'$inboundSchema'.length) });
}
const nameOf = new Map(Object.entries(components).filter(([name]) => name.endsWith('$inboundSchema')).map(([name, schema]) => [schema, name.slice(0, -'$inboundSchema'.length)]));
const { z } = await import('zod/v4-mini');
const wanted = new Set(Object.values(operations).map((op) => op.component).filter(Boolean));
let schemas = {};
// Options named only by a union are added and the bundle written again, until every reference resolves.
for (;;) {
  const root = {};
  for (const name of [...wanted].sort()) root[name] = components[`${name}$inboundSchema`];
  const bundle = toJSONSchema(z.object(root), {
    metadata: names,
    io: 'input',
    target: 'openapi-3.0',
    unrepresentable: 'any',
    cycles: 'ref',
    reused: 'inline',
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ zodSchema, jsonSchema }) => {
      const options = zodSchema.unionOptions?.map((option) => nameOf.get(option));
      if (!options || options.some((option) => !option)) return;
      for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
      jsonSchema.anyOf = options.map((option) => ({ $ref: `#/components/schemas/${option}` }));
    },
  });
  schemas = { ...(bundle.$defs ?? bundle.definitions ?? {}) };
  for (const [name, schema] of Object.entries(bundle.properties)) if (!schema.$ref) schemas[name] = schema;
  const missing = [...JSON.stringify(schemas).matchAll(/#\/(?:components\/schemas|definitions)\/(\w+)/g)].map((m) => m[1]).filter((name) => !(name in schemas));
  if (missing.length === 0) break;
  for (const name of missing) wanted.add(name);
}

// zod spells every timestamp with a long leap-year pattern beside format date-time: the format says it.
const text = JSON.stringify({ operations: Object.fromEntries(Object.entries(operations).sort()), schemas: Object.fromEntries(Object.entries(schemas).sort()) }, (key, value) =>
  key === 'pattern' && typeof value === 'string' && value.startsWith('^(?:(?:\\d\\d[2468][048]') ? undefined : key === '$ref' ? value.replace('#/definitions/', '#/components/schemas/') : value,
);
const target = join(import.meta.dirname, '../daemon/http/v1/responses.generated.json');
if (process.argv.includes('--check')) {
  // openapi.test.ts: the committed file is what the installed SDK gives.
  if (readFileSync(target, 'utf8') !== `${text}\n`) {
    console.error('daemon/http/v1/responses.generated.json is stale: run node scripts/openapi-responses.mjs');
    process.exit(1);
  }
} else {
  writeFileSync(target, `${text}\n`);
}
console.log(`${Object.keys(operations).length} operations, ${Object.keys(schemas).length} schemas, ${text.length} bytes`);
