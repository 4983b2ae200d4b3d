/**
 * Polar's framework adapters (`@polar-sh/express` and its siblings) take `server: 'sandbox' | 'production'` and no
 * server URL: they always call https://sandbox-api.polar.sh or https://api.polar.sh. An app pointed at Till has to
 * route those hosts to it. This does it in the process, where the SDK's calls go through the global `fetch`: every
 * request to either host goes to `tillUrl` instead, with its path, method, headers and body. Returns the undo.
 */
export function routePolarApiTo(tillUrl: string): () => void {
  const original = globalThis.fetch;
  const hosts = new Set(['https://sandbox-api.polar.sh', 'https://api.polar.sh']);
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (!hosts.has(url.origin)) return original(input, init);
    const target = new URL(url.pathname + url.search, tillUrl);
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    return original(target, { method: request.method, headers: request.headers, body, redirect: request.redirect, signal: request.signal });
  };
  return () => {
    globalThis.fetch = original;
  };
}
