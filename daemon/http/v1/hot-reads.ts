import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiVersion } from '../../../core/billing/shared/api-version.js';
import { ACCESS_TOKEN_PREFIX } from '../../../core/billing/access-tokens/service.js';
import { loggablePath, type Logger } from '../../logger.js';
import { logWhenDone, requestIdOf } from '../request-context.js';
import { parseInput } from '../validate.js';
import { servedVersion, VERSION_HEADER } from './api-version.js';
import type { V1Deps } from './deps.js';
import { accessTokenPrincipal, bearerOf } from './principal.js';
import { NO_CUSTOMER, requireScope, type AnyRoute } from './route.js';

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** A read answered here: its route and the one path its id sits in (`/v1/products/{id}`). */
interface HotRoute {
  route: AnyRoute;
  path: RegExp;
}

/** The reads answered here, by operation id, with the paths Express would route to them (ids of plain characters only). */
const HOT_PATHS: Readonly<Record<string, RegExp>> = {
  'products:get': /^\/v1\/products\/([A-Za-z0-9_-]+)$/,
  'customers:get_state': /^\/v1\/customers\/([A-Za-z0-9_-]+)\/state$/,
};

export interface HotReadDeps {
  v1: V1Deps;
  logger: Logger;
  /** The headers every answer of the app carries before the route's own (helmet's), as name, value, name, value… */
  securityHeaders: readonly string[];
  /** Express's ETag function (the app's `etag fn`). */
  etag: (body: string, encoding: BufferEncoding) => string;
}

/** A request listener, plus how many requests its hot lane answered (tests check that it is taken). */
export type HotReadsListener = RequestListener & { readonly answered: number };

/**
 * The two hot reads of docs/performance.md ("Reads": `GET /v1/products/{id}` and `GET /v1/customers/{id}/state`
 * with an organization access token) answered without Express, whose layers, routers and per-header writes cost
 * more than the reads' own statements. The lane takes a request only when Express would answer it with nothing
 * but the route itself (no query, no body, no conditional headers, a served Polar-Version, an access token), runs
 * the same steps as mountRoutes (token, scope, params, handler) and writes the same bytes: the app's security
 * headers, X-Request-Id, Polar-Version, Cache-Control, then the JSON as res.json would (type, length, ETag), and
 * the same log line. Anything else, and every failure (a bad token, a missing scope, an unknown id, a bug), is handed
 * to Express untouched, which answers it from the start as it always did: errors keep their exact answers.
 */
export function hotReads(app: RequestListener, routes: readonly AnyRoute[], deps: HotReadDeps): HotReadsListener {
  const hot: HotRoute[] = Object.entries(HOT_PATHS).map(([operationId, path]) => {
    const route = routes.find((r) => r.operationId === operationId);
    if (!route || route.method !== 'get' || route.query || route.body || route.public || route.portal || route.userOnly || route.tokenOnly || route.csv || route.status) {
      throw new Error(`hot read ${operationId}: not a plain GET route`);
    }
    return { route, path };
  });
  let answered = 0;

  /** Answers the request and says true, or says false having written nothing. */
  const answer = async (route: AnyRoute, id: string, bearer: string, version: ApiVersion, req: IncomingMessage, res: ServerResponse, requestId: string) => {
    let body: string;
    try {
      const principal = await accessTokenPrincipal(bearer, deps.v1);
      requireScope(principal, route.scopes);
      const result = await route.handler({
        principal,
        params: parseInput(route.params!, { id }, 'path'),
        query: {},
        body: undefined,
        rawQuery: {},
        apiVersion: version,
        deps: deps.v1,
        customer: NO_CUSTOMER,
      });
      body = JSON.stringify(result);
    } catch {
      return false;
    }
    if (body === undefined || res.destroyed) return false;
    res.writeHead(200, [
      'X-Request-Id', requestId,
      ...deps.securityHeaders,
      VERSION_HEADER, version,
      'Cache-Control', 'no-store',
      'Content-Type', 'application/json; charset=utf-8',
      'Content-Length', String(Buffer.byteLength(body)),
      'ETag', deps.etag(body, 'utf8'),
    ]);
    res.end(body);
    answered++;
    return true;
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url!;
    if (req.method !== 'GET' || url.length > 200) return app(req, res);
    let match: RegExpExecArray | null = null;
    let route: AnyRoute | undefined;
    for (const h of hot) {
      if ((match = h.path.exec(url))) {
        route = h.route;
        break;
      }
    }
    const headers = req.headers;
    if (!route || headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined || headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return app(req, res);
    const bearer = bearerOf(headers.authorization);
    const requested = headers[VERSION_HEADER.toLowerCase()];
    const version = servedVersion(typeof requested === 'string' ? requested : undefined);
    if (!bearer?.startsWith(ACCESS_TOKEN_PREFIX) || !version || Array.isArray(requested)) return app(req, res);
    const requestId = requestIdOf(req);
    // Logged as requestLogging logs, from now: a client that goes away meanwhile is a 'request aborted' line.
    const detach = logWhenDone(deps.logger, req, res, requestId, loggablePath(url));
    void answer(route, match![1]!, bearer, version, req, res, requestId).then((done) => {
      if (done || res.destroyed) return;
      detach();
      app(req, res);
    });
  };
  Object.defineProperty(listener, 'answered', { get: () => answered });
  return listener as HotReadsListener;
}
