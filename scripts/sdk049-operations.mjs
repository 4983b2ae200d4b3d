// Lists every operation of @polar-sh/sdk 0.49 (the client Polar's integrations use) as {operation, method, path}:
// walks a Polar client's sub-SDKs, finds the function each method calls (`productsGet(this, …)`) and reads that
// function's HTTP method and path template from the SDK's own source. Used for the per-operation table of
// docs/polar-wire-format.md (`node scripts/sdk049-operations.mjs`; daemon/http/v1/sdk-coverage.test.ts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The SDK's dist/esm folder, whose funcs/*.js hold each operation's request. */
function esmRoot() {
  return join(dirname(require.resolve('@polar-sh/sdk/package.json')), 'dist', 'esm');
}

function request(root, func) {
  const source = readFileSync(join(root, 'funcs', `${func}.js`), 'utf8');
  const path = source.match(/pathToFunc\("([^"]+)"\)/)?.[1];
  const method = source.match(/method: "([A-Z]+)"/)?.[1];
  // A few functions make no request (the client-side webhook check): they are not operations.
  return path && method ? { method, path } : undefined;
}

function walk(root, sdk, prefix, out, seen) {
  for (let proto = Object.getPrototypeOf(sdk); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (proto.constructor.name === 'ClientSDK') break;
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (name === 'constructor' || seen.has(`${prefix}${name}`)) continue;
      seen.add(`${prefix}${name}`);
      if (descriptor.get) walk(root, descriptor.get.call(sdk), `${prefix}${name}.`, out, seen);
      else if (typeof descriptor.value === 'function') {
        const func = String(descriptor.value).match(/\b([a-z][A-Za-z0-9]*)\(this,/)?.[1];
        const found = func ? request(root, func) : undefined;
        if (found) out.push({ operation: `${prefix}${name}`, ...found });
      }
    }
  }
}

/** Every operation of SDK 0.49, in the order its client declares them. */
export async function sdk049Operations() {
  const { Polar } = await import('@polar-sh/sdk');
  const out = [];
  walk(esmRoot(), new Polar({ accessToken: 'x', serverURL: 'http://127.0.0.1:9' }), '', out, new Set());
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await sdk049Operations(), null, 1));
