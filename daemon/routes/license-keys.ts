import { z } from 'zod';
import { LICENSE_KEY_STATUSES, LicenseKeyActivate, LicenseKeyDeactivate, LicenseKeyUpdate, LicenseKeyValidate } from '../../core/billing/license-keys/schema.js';
import {
  serializeActivationRead,
  serializeLicenseKey,
  serializeLicenseKeyWithActivations,
  serializeValidatedLicenseKey,
} from '../../core/billing/license-keys/serialize.js';
import {
  activateLicenseKey,
  deactivateLicenseKey,
  getActivation,
  getLicenseKey,
  listLicenseKeys,
  rotateLicenseKey,
  updateLicenseKey,
  validateLicenseKey,
} from '../../core/billing/license-keys/service.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany } from '../../core/billing/shared/query.js';
import { CoreError } from '../../core/errors.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['license_keys:read', 'license_keys:write'] as const;
const WRITE = ['license_keys:write'] as const;
const TAG = 'license_keys';
const IdParams = z.object({ id: z.string().min(1) });

/** A seller's validate/activate/deactivate names an organization it holds license_keys:write in; any other reads as absent. */
function ownOrganization<T extends { organization_id: string }>(principal: Principal, body: T): T {
  if (!organizationsWith(principal, WRITE).has(body.organization_id)) throw new CoreError('not_found', 'LICENSE_KEY_NOT_FOUND', 'License key not found');
  return body;
}

const keyOperations = (prefix: '/v1/license-keys' | '/v1/customer-portal/license-keys', isPublic: boolean) => {
  const guard = <T extends { organization_id: string }>(principal: Principal, body: T) => (isPublic ? body : ownOrganization(principal, body));
  const idPrefix = isPublic ? 'customer_portal:license_keys' : 'license_keys';
  const who = isPublic ? ' (no credentials: for an app holding the key)' : '';
  return [
    defineRoute({
      method: 'post',
      path: `${prefix}/validate`,
      operationId: `${idPrefix}:validate`,
      summary: `Validate a license key${who}`,
      tag: TAG,
      scopes: WRITE,
      public: isPublic,
      body: LicenseKeyValidate,
      handler: async ({ principal, body, deps, apiVersion }) => {
        const { key, customer, activation } = await validateLicenseKey(deps.db, deps.clock, guard(principal, body));
        return serializeValidatedLicenseKey(key, customer, activation, apiVersion);
      },
    }),
    defineRoute({
      method: 'post',
      path: `${prefix}/activate`,
      operationId: `${idPrefix}:activate`,
      summary: `Activate a license key instance${who}`,
      tag: TAG,
      scopes: WRITE,
      public: isPublic,
      body: LicenseKeyActivate,
      handler: async ({ principal, body, deps, apiVersion }) => {
        const { key, customer, activation } = await activateLicenseKey(deps.db, deps.clock, guard(principal, body));
        return serializeActivationRead(activation, key, customer, apiVersion);
      },
    }),
    defineRoute({
      method: 'post',
      path: `${prefix}/deactivate`,
      operationId: `${idPrefix}:deactivate`,
      summary: `Deactivate a license key instance${who}`,
      tag: TAG,
      scopes: WRITE,
      public: isPublic,
      status: 204,
      body: LicenseKeyDeactivate,
      handler: async ({ principal, body, deps }) => {
        await deactivateLicenseKey(deps.db, deps.clock, guard(principal, body));
      },
    }),
  ];
};

export const licenseKeyRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/license-keys',
    operationId: 'license_keys:list',
    summary: 'List license keys',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      benefit_id: oneOrMany(z.string()).optional(),
      status: oneOrMany(z.enum(LICENSE_KEY_STATUSES)).optional(),
    }),
    handler: async ({ principal, query, deps, apiVersion }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const page = await listLicenseKeys(deps.db, { organizationIds, benefitIds: query.benefit_id, statuses: query.status }, query);
      return listResource(page, query, ({ key, customer }) => serializeLicenseKey(key, customer, apiVersion));
    },
  }),
  // The key operations come before `/:id`, so `validate` is never read as an id.
  ...keyOperations('/v1/license-keys', false),
  ...keyOperations('/v1/customer-portal/license-keys', true),
  defineRoute({
    method: 'get',
    path: '/v1/license-keys/:id',
    operationId: 'license_keys:get',
    summary: 'Get a license key with its activations',
    tag: TAG,
    scopes: READ,
    params: IdParams,
    handler: async ({ principal, params, deps, apiVersion }) => {
      const { key, customer, activations } = await getLicenseKey(deps.db, organizationsWith(principal, READ), params.id);
      return serializeLicenseKeyWithActivations(key, customer, activations, apiVersion);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/license-keys/:id',
    operationId: 'license_keys:update',
    summary: 'Update a license key (status, usage, limits, expiry)',
    tag: TAG,
    scopes: WRITE,
    params: IdParams,
    body: LicenseKeyUpdate,
    handler: async ({ principal, params, body, deps, apiVersion }) => {
      const { key, customer } = await updateLicenseKey(deps.db, deps.clock, organizationsWith(principal, WRITE), params.id, body);
      return serializeLicenseKey(key, customer, apiVersion);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/license-keys/:id/rotate',
    operationId: 'license_keys:rotate',
    summary: 'Rotate a license key: a new key replaces it (the old one no longer validates); a revoked key is 400 RotateNotPermitted',
    tag: TAG,
    scopes: WRITE,
    params: IdParams,
    response: { component: 'LicenseKeyRead' },
    handler: async ({ principal, params, deps, apiVersion }) => {
      const { key, customer } = await rotateLicenseKey(deps.db, deps.clock, organizationsWith(principal, WRITE), params.id);
      return serializeLicenseKey(key, customer, apiVersion);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/license-keys/:id/activations/:activation_id',
    operationId: 'license_keys:get_activation',
    summary: 'Get one activation of a license key',
    tag: TAG,
    scopes: READ,
    params: z.object({ id: z.string().min(1), activation_id: z.string().min(1) }),
    handler: async ({ principal, params, deps, apiVersion }) => {
      const { key, customer, activation } = await getActivation(deps.db, organizationsWith(principal, READ), params.id, params.activation_id);
      return serializeActivationRead(activation, key, customer, apiVersion);
    },
  }),
];
