import { z } from 'zod';
import { AccessTokenCreate, AccessTokenUpdate } from '../../core/billing/access-tokens/schema.js';
import { createAccessToken, deleteAccessToken, describeAccessToken, listAccessTokens, updateAccessToken } from '../../core/billing/access-tokens/service.js';
import { AccessTokenAnswer, serializeAccessToken } from '../../core/billing/access-tokens/serialize.js';
import { ListAnswer, listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { CoreError } from '../../core/errors.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['organization_access_tokens:read', 'organization_access_tokens:write'] as const;
const WRITE = ['organization_access_tokens:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

/** Minting or widening a token needs a recently signed-in person, as Polar's web-only, fresh-session rule. */
function assertFresh(principal: Principal, freshAgeSeconds: number, now: Date) {
  if (principal.kind !== 'user' || freshAgeSeconds === 0) return;
  if (now.getTime() - principal.sessionCreatedAt.getTime() > freshAgeSeconds * 1000) {
    throw new CoreError('forbidden', 'SESSION_NOT_FRESH', 'Session is not fresh: sign in again to manage access tokens');
  }
}

export const accessTokenRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/organization-access-tokens/current',
    operationId: 'organization_access_tokens:current',
    summary: 'The organization access token this request carries: its scopes, expiry and organization (needs no scope)',
    tag: 'organization-access-tokens',
    scopes: [],
    tokenOnly: true,
    response: AccessTokenAnswer.extend({ organization: z.object({ id: z.string(), name: z.string(), slug: z.string() }) }),
    handler: async ({ principal, deps }) => {
      if (principal.kind !== 'organization_token') throw new CoreError('forbidden', 'ACCESS_TOKEN_REQUIRED', 'This describes an organization access token; call it with one');
      const { accessToken, organization } = await describeAccessToken(deps.db, principal.tokenId, principal.organizationId);
      return { ...serializeAccessToken(accessToken), organization: { id: organization.id, name: organization.name, slug: organization.slug } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/organization-access-tokens',
    operationId: 'organization_access_tokens:list',
    summary: 'List organization access tokens (never the tokens themselves)',
    tag: 'organization-access-tokens',
    scopes: READ,
    userOnly: true,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      sorting: sortingQuery(['created_at', 'comment', 'last_used_at', 'organization_id']).default(['created_at']),
    }),
    response: ListAnswer(AccessTokenAnswer),
    handler: async ({ principal, query, deps }) => {
      const reachable = organizationsWith(principal, READ);
      const ids = query.organization_id ? query.organization_id.filter((id) => reachable.has(id)) : [...reachable];
      return listResource(await listAccessTokens(deps.db, ids, toSortCriteria(query.sorting), query), query, serializeAccessToken);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/organization-access-tokens',
    operationId: 'organization_access_tokens:create',
    summary: 'Create an organization access token; the token is shown once',
    tag: 'organization-access-tokens',
    scopes: WRITE,
    userOnly: true,
    status: 201,
    body: AccessTokenCreate,
    response: z.object({ organization_access_token: AccessTokenAnswer, token: z.string().describe('The token itself (till_oat_…), shown only now') }),
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      assertFresh(principal, deps.sessionFreshAge, deps.clock.now());
      const userId = principal.kind === 'user' ? principal.userId : '';
      const { accessToken, token } = await createAccessToken(deps.db, deps.clock, { organizationId, createdByUserId: userId, request: body });
      return { organization_access_token: serializeAccessToken(accessToken), token };
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/organization-access-tokens/:id',
    operationId: 'organization_access_tokens:update',
    summary: 'Change an organization access token\'s comment or scopes',
    tag: 'organization-access-tokens',
    scopes: WRITE,
    userOnly: true,
    params: IdParams,
    body: AccessTokenUpdate,
    response: AccessTokenAnswer,
    handler: async ({ principal, params, body, deps }) => {
      assertFresh(principal, deps.sessionFreshAge, deps.clock.now());
      return serializeAccessToken(await updateAccessToken(deps.db, deps.clock, [...organizationsWith(principal, WRITE)], params.id, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/organization-access-tokens/:id',
    operationId: 'organization_access_tokens:delete',
    summary: 'Revoke an organization access token',
    tag: 'organization-access-tokens',
    scopes: WRITE,
    userOnly: true,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteAccessToken(deps.db, deps.clock, [...organizationsWith(principal, WRITE)], params.id);
    },
  }),
];
