import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import type { Principal } from '../../../core/billing/shared/principal.js';
import { ANONYMOUS, reachableOrganizations } from '../../../core/billing/shared/principal.js';
import type { Scope } from '../../../core/billing/shared/scopes.js';
import type { ApiVersion } from '../../../core/billing/shared/api-version.js';
import { CoreError, isCoreError } from '../../../core/errors.js';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, type Claim } from '../../../core/idempotency/service.js';
import type { CsvExport } from '../../../core/billing/shared/csv.js';
import { coreErrorAnswer } from '../errors.js';
import { idempotentRequest, keepsRefusal, sendReplay } from './idempotency.js';
import { parseInput } from '../validate.js';
import { requestApiVersion } from './api-version.js';
import type { V1Deps } from './deps.js';
import { resolveCustomer, resolvePrincipal } from './principal.js';
import type { CustomerPrincipal } from '../../../core/billing/customer-sessions/service.js';

type Method = 'get' | 'post' | 'patch' | 'delete';

export interface RouteContext<P, Q, B> {
  principal: Principal;
  params: P;
  query: Q;
  body: B;
  /** The raw query (for `metadata[key]` filters, which a schema cannot name). */
  rawQuery: Record<string, unknown>;
  /** The `Polar-Version` the caller asked for: serializers whose wire differs between versions take it. */
  apiVersion: ApiVersion;
  deps: V1Deps;
  /** On a customer-portal route: the one customer (of one organization) the customer session speaks for. */
  customer: CustomerPrincipal;
}

/** One /v1 operation: what it takes, what it answers, which scope it needs, and the one service call it makes. */
export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  /** Express path; `{id}` style is derived for the OpenAPI document. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Any one of these scopes lets the call through (Polar: a write scope implies read). */
  scopes: readonly Scope[];
  /** Only a signed-in user (not an access token) may call this. */
  userOnly?: boolean;
  /** Only an organization access token may call this, and it needs none of `scopes`: it describes the token itself. */
  tokenOnly?: boolean;
  /**
   * Called without credentials (a customer's browser, a licensed app): the principal is ANONYMOUS, `scopes`
   * only documents the operation, and the handler finds the organization from what it is given (a client
   * secret, an organization id plus a key).
   */
  public?: boolean;
  /**
   * A customer-portal route: called with a customer session token (`Bearer till_cst_…`) and nothing else; the
   * principal is ANONYMOUS and the handler reads `customer`, which names exactly one customer of one organization.
   */
  portal?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The answer, for the OpenAPI document: a zod schema, a component of the document by name (one of the SDK's, for
   * an answer in Polar's shape), or null for an answer without a body. Absent: the SDK's own description of the
   * operation, by its method and path.
   */
  response?: z.ZodType | { component: string } | null;
  /** Success status: 200 by default, 201 for creates, 202 for work accepted, 204 for deletes (the SDK checks it exactly). */
  status?: 200 | 201 | 202 | 204;
  /** A handler answering null means the work is not done yet: 202 without a body (Polar's receipt in the making). */
  acceptedWhenNull?: boolean;
  /** The handler answers a CsvExport: `text/csv`, streamed line by line as the client reads (Polar's exports). */
  csv?: boolean;
  handler(context: RouteContext<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<unknown>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any, any>;

/** Declares a route with its types inferred from its schemas. */
export const defineRoute = <P extends z.ZodType = z.ZodObject<{}>, Q extends z.ZodType = z.ZodObject<{}>, B extends z.ZodType = z.ZodUndefined>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec<P, Q, B> => spec;

/** Throws unless the principal holds one of the scopes somewhere (per-organization checks follow in services). */
export function requireScope(principal: Principal, scopes: readonly Scope[], organizationId?: string) {
  const reachable = reachableOrganizations(principal);
  const granted = organizationId ? [reachable.get(organizationId)] : [...reachable.values()];
  if (granted.some((set) => set && scopes.some((scope) => set.has(scope)))) return;
  if (organizationId && !reachable.has(organizationId)) throw new CoreError('not_found', 'ORGANIZATION_NOT_FOUND', 'Organization not found');
  throw new CoreError('forbidden', 'INSUFFICIENT_SCOPE', `This needs one of the scopes: ${scopes.join(', ')}`);
}

/** The organizations where the principal holds one of the scopes: the ones a call may see or touch. */
export function organizationsWith(principal: Principal, scopes: readonly Scope[]): Set<string> {
  const ids = new Set<string>();
  for (const [id, granted] of reachableOrganizations(principal)) if (scopes.some((scope) => granted.has(scope))) ids.add(id);
  return ids;
}

/**
 * The organization a create applies to: the token's own, the one named (which the caller must reach,
 * with a write scope), or the caller's only organization.
 */
export function targetOrganization(principal: Principal, requested: string | null | undefined, scopes: readonly Scope[]): string {
  if (requested) {
    // Polar answers an organization the caller cannot reach as invalid input, the same as one that does not exist.
    if (!reachableOrganizations(principal).has(requested)) {
      throw new CoreError('invalid', 'INVALID_ORGANIZATION', 'This organization does not exist', [
        { loc: ['body', 'organization_id'], msg: 'This organization does not exist.', type: 'invalid_organization' },
      ]);
    }
    requireScope(principal, scopes, requested);
    return requested;
  }
  const candidates = [...reachableOrganizations(principal).keys()];
  if (candidates.length === 1) {
    requireScope(principal, scopes, candidates[0]);
    return candidates[0];
  }
  throw new CoreError('invalid', 'ORGANIZATION_REQUIRED', 'organization_id is required', [
    { loc: ['body', 'organization_id'], msg: candidates.length ? 'Field required: you belong to several organizations' : 'You belong to no organization', type: 'missing' },
  ]);
}

/** What a seller route's context holds for `customer`: nobody (a handler of a non-portal route never reads it). */
export const NO_CUSTOMER: CustomerPrincipal = { sessionId: '', organizationId: '', customerId: '', expiresAt: new Date(0), returnUrl: null };

/** `/v1/products` of `/v1/products/:id`: the first two segments, when both are plain words (lower case, as Express matches). */
const GROUP = /^\/([a-z0-9_-]+)\/([a-z0-9_-]+)(?=\/|$)/;
const groupOf = (path: string) => GROUP.exec(path.toLowerCase())?.[0];

/**
 * Mounts the routes on a router: authenticate, check scope, claim the idempotency key, validate, call, serialize.
 * Routes are grouped by their first two segments (`/v1/products`), one router per group, and a request goes
 * straight to its group's: Express tries a router's routes one after another, and walking the ~180 /v1 routes cost
 * more than some of the reads themselves (docs/performance.md, "Reads"). Groups cannot overlap (their first two
 * segments differ), and within one the routes keep their order, so the route answering is the same as before. A
 * route whose path does not start with two plain segments is tried after the groups.
 */
export function mountRoutes(router: Router, routes: readonly AnyRoute[], deps: V1Deps) {
  const groups = new Map<string, Router>();
  const ungrouped: [AnyRoute, RequestHandler][] = [];
  for (const route of routes) {
    const handler: RequestHandler = async (req: Request, res: Response, next) => {
      let claim: Claim | undefined;
      try {
        // An answer about an authenticated caller is theirs alone: no shared or browser cache keeps it.
        if (!route.public) res.setHeader('Cache-Control', 'no-store');
        const customer = route.portal ? await resolveCustomer(req, deps) : NO_CUSTOMER;
        const principal = route.public || route.portal ? ANONYMOUS : await resolvePrincipal(req, deps);
        if (route.userOnly && principal.kind !== 'user') {
          throw new CoreError('forbidden', 'USER_SESSION_REQUIRED', 'This needs a signed-in user, not an access token');
        }
        // A token's scopes hold for its one organization, so they are checked here; a user's rights differ per
        // organization and are checked against the organization a call touches (unreachable ones read as 404).
        if (route.tokenOnly && principal.kind !== 'organization_token') {
          throw new CoreError('forbidden', 'ACCESS_TOKEN_REQUIRED', 'This needs an organization access token, not a session');
        }
        if (principal.kind === 'organization_token' && !route.tokenOnly) requireScope(principal, route.scopes);
        const keyed = idempotentRequest(req, principal);
        if (keyed) {
          const outcome = await claimIdempotencyKey(deps.db, deps.clock, keyed);
          if (outcome.kind === 'replay') return sendReplay(res, outcome.status, outcome.responseBody);
          claim = outcome;
        }
        const rawQuery = req.query as Record<string, unknown>;
        const result = await route.handler({
          principal,
          params: route.params ? parseInput(route.params, req.params, 'path') : {},
          query: route.query ? parseInput(route.query, rawQuery, 'query') : {},
          body: route.body ? parseInput(route.body, req.body ?? {}, 'body') : undefined,
          rawQuery,
          apiVersion: requestApiVersion(res),
          deps,
          customer,
        });
        if (route.csv) return await streamCsv(req, res, result as CsvExport);
        const pending = route.acceptedWhenNull && result === null;
        const status = pending ? 202 : (route.status ?? 200);
        // Stored before it is sent: a client that repeats the moment it has the answer gets a replay, not a 409.
        if (claim) await completeIdempotencyKey(deps.db, claim, status, status === 204 ? null : JSON.stringify(result ?? null));
        if (status === 204 || pending) res.status(status).end();
        else res.status(status).json(result);
      } catch (error) {
        if (claim) await settleFailedClaim(deps, claim, error).catch(() => undefined);
        next(error);
      }
    };
    const group = groupOf(route.path);
    if (!group) {
      ungrouped.push([route, handler]);
      continue;
    }
    let groupRouter = groups.get(group);
    if (!groupRouter) groups.set(group, (groupRouter = Router()));
    groupRouter[route.method](route.path, handler);
  }
  router.use((req: Request, res: Response, next: NextFunction) => {
    const group = groupOf(req.path);
    const groupRouter = group === undefined ? undefined : groups.get(group);
    if (groupRouter) groupRouter(req, res, next);
    else next();
  });
  for (const [route, handler] of ungrouped) router[route.method](route.path, handler);
}

/**
 * Writes a CSV answer as its lines come, waiting whenever the client reads slower than they are made. A failure
 * before the first line is an ordinary error answer; one after it cannot be any more: it is logged and the
 * connection cut, so the file is visibly short.
 */
async function streamCsv(req: Request, res: Response, csv: CsvExport) {
  const iterator = csv.lines[Symbol.asyncIterator]();
  let line = await iterator.next();
  res.status(200);
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${csv.filename}"`);
  try {
    for (; !line.done; line = await iterator.next()) {
      if (res.destroyed) break;
      if (!res.write(line.value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
    }
    res.end();
  } catch (error) {
    req.log?.error({ err: error }, 'CSV export failed after its first line');
    res.destroy();
  } finally {
    await iterator.return?.();
  }
}

/** A refusal that is the request's answer is kept for replays; anything else (a bug, a conflict) frees the key. */
async function settleFailedClaim(deps: V1Deps, claim: Claim, error: unknown) {
  if (isCoreError(error) && keepsRefusal(error)) {
    const { status, body } = coreErrorAnswer(error);
    await completeIdempotencyKey(deps.db, claim, status, JSON.stringify(body));
  } else {
    await releaseIdempotencyKey(deps.db, claim);
  }
}
