import { Router, type Request } from 'express';
import { z } from 'zod';
import { DEFAULT_MAX_FILE_SIZE, FileCreate, FileUpdate, FileUploadCompleted } from '../../core/billing/files/schema.js';
import { serializeFile, serializeFileUpload } from '../../core/billing/files/serialize.js';
import { createFile, deleteFile, listFiles, openPublicFile, updateFile, type FileAccess } from '../../core/billing/files/service.js';
import type { FileStorage } from '../../core/billing/files/storage.js';
import { completeUpload, receivePart } from '../../core/billing/files/upload.js';
import { listResource, PageQuery } from '../../core/billing/shared/pagination.js';
import type { Principal } from '../../core/billing/shared/principal.js';
import { oneOrMany } from '../../core/billing/shared/query.js';
import { sendStoredFile } from '../http/send-file.js';
import type { V1Deps } from '../http/v1/deps.js';
import { defineRoute, organizationsWith, targetOrganization } from '../http/v1/route.js';

const READ = ['files:read', 'files:write'] as const;
const WRITE = ['files:write'] as const;
const IdParams = z.object({ id: z.string().min(1) });

const accessOf = (principal: Principal): FileAccess => ({ read: organizationsWith(principal, READ), write: organizationsWith(principal, WRITE) });

function storageOf(deps: V1Deps): FileStorage {
  // A wiring bug, not a caller's mistake: startDaemon always passes one.
  if (!deps.fileStorage) throw new Error('tilld was started without a file storage');
  return deps.fileStorage;
}

export const fileRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/files',
    operationId: 'files:list',
    summary: 'List uploaded files',
    tag: 'files',
    scopes: READ,
    query: PageQuery.extend({ organization_id: oneOrMany(z.string()).optional(), ids: oneOrMany(z.string()).optional() }),
    handler: async ({ principal, query, deps }) => {
      const reachable = organizationsWith(principal, READ);
      const organizationIds = query.organization_id ? query.organization_id.filter((id) => reachable.has(id)) : [...reachable];
      const page = await listFiles(deps.db, { organizationIds, ids: query.ids }, query);
      return listResource(page, query, (file) => serializeFile(file, deps.baseUrl));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/files',
    operationId: 'files:create',
    summary: 'Create a file and get the URLs to upload its parts to',
    tag: 'files',
    scopes: WRITE,
    status: 201,
    body: FileCreate,
    handler: async ({ principal, body, deps }) => {
      const organizationId = targetOrganization(principal, body.organization_id, WRITE);
      storageOf(deps);
      const created = await createFile(deps.db, deps.clock, { organizationId, request: body, maxSize: deps.maxFileSize ?? DEFAULT_MAX_FILE_SIZE });
      return serializeFileUpload(created, deps.baseUrl);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/files/:id/uploaded',
    operationId: 'files:uploaded',
    summary: 'Complete an upload: verify size and SHA-256, then mark the file uploaded',
    tag: 'files',
    scopes: WRITE,
    params: IdParams,
    body: FileUploadCompleted,
    handler: async ({ principal, params, body, deps }) =>
      serializeFile(await completeUpload(deps.db, deps.clock, storageOf(deps), accessOf(principal), params.id, body), deps.baseUrl),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/files/:id',
    operationId: 'files:update',
    summary: 'Rename a file or change its version',
    tag: 'files',
    scopes: WRITE,
    params: IdParams,
    body: FileUpdate,
    handler: async ({ principal, params, body, deps }) =>
      serializeFile(await updateFile(deps.db, deps.clock, accessOf(principal), params.id, body), deps.baseUrl),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/files/:id',
    operationId: 'files:delete',
    summary: 'Delete a file and its bytes',
    tag: 'files',
    scopes: WRITE,
    status: 204,
    params: IdParams,
    handler: async ({ principal, params, deps }) => {
      await deleteFile(deps.db, deps.clock, storageOf(deps), accessOf(principal), params.id);
    },
  }),
];

const declaredLength = (req: Request) => (req.headers['content-length'] ? Number(req.headers['content-length']) : undefined);

/**
 * The two file routes outside the JSON API, mounted before any body parser: the part upload (raw bytes,
 * authorised by the token in its query string, as an S3 presigned URL: the SDK's caller sends no bearer there)
 * and the public bytes of product media and avatars.
 */
export function fileTransferRouter(deps: V1Deps): Router {
  const router = Router();

  router.put('/v1/files/upload/:id/:part', async (req, res, next) => {
    try {
      const partNumber = /^\d{1,5}$/.test(req.params.part) ? Number(req.params.part) : 0;
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      const { etag } = await receivePart(deps.db, deps.clock, storageOf(deps), {
        fileId: req.params.id,
        token,
        partNumber,
        body: req,
        declaredLength: declaredLength(req),
      });
      res.setHeader('ETag', etag);
      res.setHeader('Access-Control-Expose-Headers', 'ETag');
      res.status(200).end();
    } catch (error) {
      next(error);
    }
  });

  router.get('/files/public/:id', async (req, res, next) => {
    try {
      const { file, body } = await openPublicFile(deps.db, storageOf(deps), req.params.id);
      await sendStoredFile(req, res, file, body, {
        ...(file.checksumEtag ? { ETag: file.checksumEtag } : {}),
        // The bytes of a file id never change, so they may be cached for good.
        'Cache-Control': 'public, max-age=31536000, immutable',
        // Checkout pages and avatars on other origins embed these.
        'Cross-Origin-Resource-Policy': 'cross-origin',
        // An SVG served from the daemon's origin must not run scripts there.
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      });
    } catch (error) {
      if (res.headersSent) res.destroy();
      else next(error);
    }
  });

  return router;
}
