import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { newId, toDbTime } from '../../db/columns.js';
import { CoreError } from '../../errors.js';
import { offsetOf, type Page, type PageQuery } from '../shared/pagination.js';
import { findBenefit } from '../benefits/repository.js';
import { findFilesByIds, findUploadedFile } from '../files/repository.js';
import type { FileRecord } from '../files/schema.js';
import type { FileStorage } from '../files/storage.js';
import { findGrant, findGrantById } from './repository.js';
import { stateOf } from './state.js';

/** How long a download link works once handed out. */
export const DOWNLOAD_URL_TTL_MS = 60 * 60 * 1000;

const TOKEN_TYPE = 'till:benefit_download';

/** The key download links are signed with: derived from the daemon's secret, so it signs nothing else. */
export const downloadKey = (secret: string): Buffer => createHmac('sha256', secret).update(TOKEN_TYPE).digest();

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

interface DownloadClaim {
  grant_id: string;
  file_id: string;
  /** Expiry, epoch milliseconds. */
  exp: number;
}

export function mintDownloadToken(key: Buffer, claim: DownloadClaim): string {
  const payload = Buffer.from(JSON.stringify(claim)).toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

function verifyDownloadToken(key: Buffer, token: string): DownloadClaim | undefined {
  const [payload, signature, ...rest] = token.split('.');
  if (!payload || !signature || rest.length > 0) return undefined;
  const expected = Buffer.from(sign(key, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const claim = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<DownloadClaim>;
    return typeof claim.grant_id === 'string' && typeof claim.file_id === 'string' && typeof claim.exp === 'number' ? (claim as DownloadClaim) : undefined;
  } catch {
    return undefined;
  }
}

const grantNotFound = () => new CoreError('not_found', 'BENEFIT_GRANT_NOT_FOUND', 'Benefit grant not found');
const linkInvalid = () => new CoreError('not_found', 'DOWNLOAD_NOT_FOUND', 'This download link is not valid (expired, or the benefit was revoked)');

/** The file ids a grant in effect lets its customer download (none once revoked). */
const filesOf = (properties: Record<string, unknown>) => (Array.isArray(properties.files) ? properties.files.filter((id): id is string => typeof id === 'string') : []);

export interface Downloadable {
  grantId: string;
  benefitId: string;
  file: FileRecord;
  url: string;
  expiresAt: Date;
}

/**
 * The files a downloadables grant gives its customer, each with a signed link that works for an hour (to hand to
 * the customer, or to put in an email). 404 for a grant the caller cannot read; 422 for one of another type or not
 * in effect.
 */
export async function grantDownloads(
  db: Database,
  clock: Clock,
  readable: ReadonlySet<string>,
  grantId: string,
  link: { key: Buffer; baseUrl: string },
): Promise<Downloadable[]> {
  const grant = await findGrant(db, grantId, readable);
  if (!grant) throw grantNotFound();
  const benefit = await findBenefit(db, grant.benefitId, [grant.organizationId]);
  if (!benefit || benefit.type !== 'downloadables') {
    throw new CoreError('invalid', 'NOT_DOWNLOADABLES', 'Only a downloadables grant has files to download', [{ loc: ['path', 'id'], msg: 'This grant is not of a downloadables benefit.', type: 'value_error' }]);
  }
  if (stateOf(grant) !== 'granted') {
    throw new CoreError('invalid', 'GRANT_NOT_IN_EFFECT', 'This grant is not in effect', [{ loc: ['path', 'id'], msg: 'The benefit is not granted (revoked, or not granted yet).', type: 'value_error' }]);
  }
  const files = await findFilesByIds(db, filesOf(grant.properties));
  const expiresAt = new Date(clock.now().getTime() + DOWNLOAD_URL_TTL_MS);
  return filesOf(grant.properties).flatMap((fileId) => {
    const file = files.get(fileId);
    if (!file || !file.isUploaded) return [];
    const token = mintDownloadToken(link.key, { grant_id: grant.id, file_id: file.id, exp: expiresAt.getTime() });
    return [{ grantId: grant.id, benefitId: grant.benefitId, file, url: `${link.baseUrl}/downloads/${token}`, expiresAt }];
  });
}

/**
 * The bytes behind a download link: the link must be signed by this daemon and unexpired, and the grant must
 * still be in effect and still list the file (a revoked grant's links stop working at once).
 */
export async function openDownload(db: Database, clock: Clock, storage: FileStorage, key: Buffer, token: string): Promise<{ file: FileRecord; body: Readable }> {
  const claim = verifyDownloadToken(key, token);
  if (!claim || claim.exp <= clock.now().getTime()) throw linkInvalid();
  const found = await findGrantById(db, claim.grant_id);
  if (!found || stateOf(found) !== 'granted' || !filesOf(found.properties).includes(claim.file_id)) throw linkInvalid();
  const file = await findUploadedFile(db, claim.file_id, ['downloadable']);
  const body = file && file.organizationId === found.organizationId ? await storage.get(file.path) : undefined;
  if (!file || !body) throw linkInvalid();
  await recordDownload(db, clock.now(), { organizationId: found.organizationId, benefitId: found.benefitId, fileId: file.id, customerId: found.customerId });
  return { file, body };
}

/** Counts one download of a file by a customer through a benefit (one row per customer, benefit and file). */
async function recordDownload(db: Database, at: Date, download: { organizationId: string; benefitId: string; fileId: string; customerId: string }): Promise<void> {
  await db('file_downloads')
    .insert({
      id: newId(),
      organization_id: download.organizationId,
      benefit_id: download.benefitId,
      file_id: download.fileId,
      customer_id: download.customerId,
      downloads: 1,
      created_at: toDbTime(at),
      last_downloaded_at: toDbTime(at),
    })
    .onConflict(['benefit_id', 'file_id', 'customer_id'])
    .merge({ downloads: db.raw('file_downloads.downloads + 1'), last_downloaded_at: toDbTime(at) });
}

/** A file of a downloadables benefit, with how many customers downloaded it and how many times in all. */
export interface BenefitFile {
  file: FileRecord;
  downloaders: number;
  downloads: number;
}

/**
 * The uploaded files of a downloadables benefit, in the benefit's order, with their download counts (Polar's
 * `benefits.files`). 404 for a benefit the caller cannot read or of another type, as Polar.
 */
export async function benefitFiles(db: Database, readable: ReadonlySet<string>, benefitId: string, page: PageQuery): Promise<Page<BenefitFile>> {
  const benefit = await findBenefit(db, benefitId, readable);
  if (!benefit || benefit.type !== 'downloadables') throw new CoreError('not_found', 'BENEFIT_NOT_FOUND', 'Benefit not found');
  const ids = benefit.properties.files;
  const files = await findFilesByIds(db, ids);
  const listed = ids.flatMap((id) => {
    const file = files.get(id);
    return file && file.isUploaded && file.service === 'downloadable' && file.organizationId === benefit.organizationId ? [file] : [];
  });
  const shown = listed.slice(offsetOf(page), offsetOf(page) + page.limit);
  const counts = shown.length
    ? await db('file_downloads')
        .where({ benefit_id: benefit.id })
        .whereIn('file_id', shown.map((file) => file.id))
        .where('downloads', '>', 0)
        .groupBy('file_id')
        .select('file_id', db.raw('count(distinct customer_id) as downloaders'), db.raw('sum(downloads) as downloads'))
    : [];
  const byFile = new Map(counts.map((row: Record<string, unknown>) => [String(row.file_id), row]));
  return {
    items: shown.map((file) => ({ file, downloaders: Number(byFile.get(file.id)?.downloaders ?? 0), downloads: Number(byFile.get(file.id)?.downloads ?? 0) })),
    totalCount: listed.length,
  };
}
