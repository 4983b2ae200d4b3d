// Lists every operation of @polar-sh/sdk 1.x (the 2026-04 client) as {operation, method, path}, by calling each one
// against a fetch that records the request and answers nothing. Used to write the coverage table of
// docs/polar-wire-format.md (`node scripts/sdk-operations.mjs`).
const { createPolar } = await import('polar-sdk-v1/2026-04');

const DUMMIES = ['P1ARG', 'P2ARG', 'P3ARG'];
let recorded;
globalThis.fetch = async (url, init) => {
  recorded = { method: init.method, url: String(url) };
  throw new Error('recorded');
};

function pathTemplate(url) {
  let path = new URL(url).pathname;
  for (const dummy of DUMMIES) path = path.replaceAll(dummy, '{}');
  return path;
}

async function walk(service, prefix, out) {
  for (const [name, value] of Object.entries(service)) {
    if (typeof value === 'function') {
      if (name.startsWith('iter')) continue;
      recorded = undefined;
      try {
        await value(...DUMMIES);
      } catch {
        // Every call fails once its request is recorded.
      }
      if (recorded) out.push({ operation: `${prefix}${name}`, method: recorded.method, path: pathTemplate(recorded.url) });
      else out.push({ operation: `${prefix}${name}`, method: null, path: null });
    } else if (value && typeof value === 'object') {
      await walk(value, `${prefix}${name}.`, out);
    }
  }
}

export async function sdkOperations() {
  const out = [];
  await walk(createPolar({ accessToken: 'x', baseUrl: 'http://127.0.0.1:9' }), '', out);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await sdkOperations(), null, 1));
