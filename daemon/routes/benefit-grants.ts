import { Router } from 'express';
import { z } from 'zod';
import { benefitFiles, downloadKey, grantDownloads, openDownload, type Downloadable } from '../../core/billing/benefit-grants/downloads.js';
import { serializeFile } from '../../core/billing/files/serialize.js';
import { sendStoredFile } from '../http/send-file.js';
import type { V1Deps } from '../http/v1/deps.js';
import { GRANT_SORT_PROPERTIES } from '../../core/billing/benefit-grants/schema.js';
import { serializeGrant } from '../../core/billing/benefit-grants/serialize.js';
import { listBenefitGrants, type GrantView } from '../../core/billing/benefit-grants/queries.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import { oneOrMany, queryBoolean, sortingQuery, toSortCriteria } from '../../core/billing/shared/query.js';
import { defineRoute, organizationsWith } from '../http/v1/route.js';

const READ = ['benefits:read', 'benefits:write'] as const;
const TAG = 'benefit_grants';

const serialize = (view: GrantView) => serializeGrant(view.grant, view.customer, view.benefit);

/** Download links are signed with a key derived from the daemon's secret (the one Better Auth signs with). */
/** Polar's ListResource[BenefitDownloadableFile] (not in SDK 0.49: described here for /openapi.json). */
const nullableText = z.string().nullable();
const BenefitDownloadableFiles = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      organization_id: z.string(),
      name: z.string(),
      path: z.string(),
      mime_type: z.string(),
      size: z.number().int(),
      storage_version: nullableText,
      checksum_etag: nullableText,
      checksum_sha256_base64: nullableText,
      checksum_sha256_hex: nullableText,
      last_modified_at: nullableText,
      version: nullableText,
      service: z.literal('downloadable'),
      is_uploaded: z.boolean(),
      created_at: z.string(),
      flagged_malicious_at: nullableText,
      size_readable: z.string(),
      downloaders: z.number().int().describe('Distinct customers who downloaded the file'),
      downloads: z.number().int().describe('Downloads of the file in all'),
    }),
  ),
  pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }),
});

export const downloadKeyOf = async (deps: V1Deps) => downloadKey((await deps.auth.$context).secret);

/** Polar's DownloadableRead: the file, with a link that downloads it (`download.url`, valid until `expires_at`). */
export const serializeDownloadable = (downloadable: Downloadable, baseUrl: string) => ({
  id: `${downloadable.grantId}:${downloadable.file.id}`,
  benefit_id: downloadable.benefitId,
  file: { ...serializeFile(downloadable.file, baseUrl), download: { url: downloadable.url, headers: {}, expires_at: downloadable.expiresAt.toISOString() } },
});

export const benefitGrantRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/benefit-grants',
    operationId: 'benefit_grants:list',
    summary: 'List benefit grants (emitted as benefit_grant.created/updated/revoked/cycled)',
    tag: TAG,
    scopes: READ,
    query: PageQuery.extend({
      organization_id: oneOrMany(z.string()).optional(),
      customer_id: oneOrMany(z.string()).optional(),
      external_customer_id: oneOrMany(z.string()).optional(),
      is_granted: queryBoolean.optional(),
      sorting: sortingQuery(GRANT_SORT_PROPERTIES).default(['-created_at']),
    }),
    handler: async ({ principal, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => readable.has(id)) : [...readable];
      const filter = { organizationIds, customerIds: query.customer_id, externalCustomerIds: query.external_customer_id, isGranted: query.is_granted };
      const page = await listBenefitGrants(deps.db, readable, filter, toSortCriteria(query.sorting), query);
      return listResource(page, query, serialize);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/benefits/:id/grants',
    operationId: 'benefits:grants',
    summary: 'List the grants of a benefit',
    tag: 'benefits',
    scopes: READ,
    params: z.object({ id: z.string().min(1) }),
    query: PageQuery.extend({ is_granted: queryBoolean.optional(), customer_id: oneOrMany(z.string()).optional(), member_id: oneOrMany(z.string()).optional() }),
    handler: async ({ principal, params, query, deps }) => {
      const readable = organizationsWith(principal, READ);
      const filter = { organizationIds: [...readable], benefitIds: [params.id], customerIds: query.customer_id, isGranted: query.is_granted };
      const page = await listBenefitGrants(deps.db, readable, filter, toSortCriteria(['-created_at']), query, { benefitId: params.id });
      return listResource(page, query, serialize);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/benefits/:id/files',
    operationId: 'benefits:files',
    summary: 'The uploaded files of a downloadables benefit, in its order, with how many customers downloaded each and how many times',
    tag: 'benefits',
    scopes: READ,
    params: z.object({ id: z.string().min(1) }),
    query: PageQuery,
    response: BenefitDownloadableFiles,
    handler: async ({ principal, params, query, deps }) => {
      const page = await benefitFiles(deps.db, organizationsWith(principal, READ), params.id, query);
      return listResource(page, query, ({ file, downloaders, downloads }) => ({ ...serializeFile(file, deps.baseUrl), downloaders, downloads }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/benefit-grants/:id/downloads',
    operationId: 'benefit_grants:downloads',
    summary: 'The files a downloadables grant gives its customer, with signed download links (valid one hour)',
    tag: TAG,
    scopes: READ,
    params: z.object({ id: z.string().min(1) }),
    response: { component: 'ListResourceDownloadableRead' },
    handler: async ({ principal, params, deps }) => {
      const downloads = await grantDownloads(deps.db, deps.clock, organizationsWith(principal, READ), params.id, { key: await downloadKeyOf(deps), baseUrl: deps.baseUrl });
      const items = downloads.map((downloadable) => serializeDownloadable(downloadable, deps.baseUrl));
      return { items, pagination: { total_count: items.length, max_page: items.length ? 1 : 0 } };
    },
  }),
];

/**
 * `GET /downloads/{token}`: the bytes behind a signed download link, for the customer's browser (no credentials:
 * the signature is the authorization). Mounted outside /v1, like the public file route.
 */
export function downloadRouter(deps: V1Deps): Router {
  const router = Router();
  router.get('/downloads/:token', async (req, res, next) => {
    try {
      if (!deps.fileStorage) throw new Error('tilld was started without a file storage');
      const { file, body } = await openDownload(deps.db, deps.clock, deps.fileStorage, await downloadKeyOf(deps), req.params.token);
      await sendStoredFile(req, res, file, body, {
        'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`,
        'Cache-Control': 'private, no-store',
        'Content-Security-Policy': "default-src 'none'; sandbox",
        'X-Content-Type-Options': 'nosniff',
      });
    } catch (error) {
      if (res.headersSent) res.destroy();
      else next(error);
    }
  });
  return router;
}
