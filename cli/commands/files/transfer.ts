import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { describeErrorBody, httpFailure } from '../../api/client.js';
import { CliError, EXIT } from '../../errors.js';
import { CLI_VERSION } from '../../version.js';

/** A byte range of the file, end exclusive, as FileCreate's parts declare them. */
export interface PartRange {
  number: number;
  chunk_start: number;
  chunk_end: number;
}

/** Cut into 8 MiB parts: few enough requests, and a failed part costs little to send again. */
export const PART_SIZE = 8 * 1024 * 1024;

export function partsOf(size: number, partSize = PART_SIZE): PartRange[] {
  const count = Math.max(1, Math.ceil(size / partSize));
  return Array.from({ length: count }, (_, index) => ({ number: index + 1, chunk_start: index * partSize, chunk_end: Math.min(size, (index + 1) * partSize) }));
}

/** The SHA-256 (base64) of the whole file and of each part, in one read. */
export async function checksums(path: string, parts: readonly PartRange[]): Promise<{ whole: string; parts: string[] }> {
  const whole = createHash('sha256');
  const digests: string[] = [];
  let index = 0;
  let part = createHash('sha256');
  let left = parts[0]!.chunk_end - parts[0]!.chunk_start;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    whole.update(chunk);
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(left, chunk.length - offset);
      part.update(chunk.subarray(offset, offset + take));
      offset += take;
      left -= take;
      if (left === 0 && index < parts.length - 1) {
        digests.push(part.digest('base64'));
        part = createHash('sha256');
        index++;
        left = parts[index]!.chunk_end - parts[index]!.chunk_start;
      }
    }
  }
  digests.push(part.digest('base64'));
  return { whole: whole.digest('base64'), parts: digests };
}

/**
 * PUTs one part's bytes to the URL the API handed out (the token in it is the credential: no Authorization
 * header goes with it) and returns the ETag it answers. `sent` is told how many bytes have left the file.
 */
export async function putPart(url: string, file: string, range: PartRange, headers: Record<string, string>, sent: (bytes: number) => void): Promise<string> {
  const target = new URL(url);
  const { request } = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const length = range.chunk_end - range.chunk_start;
  const response = await new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const req = request(target, { method: 'PUT', headers: { ...headers, 'content-length': String(length), 'content-type': 'application/octet-stream', 'user-agent': `till-cli/${CLI_VERSION}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.setTimeout(120_000, () => req.destroy(Object.assign(new Error('no answer within 120 s'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    if (length === 0) {
      req.end();
      return;
    }
    const bytes = createReadStream(file, { start: range.chunk_start, end: range.chunk_end - 1 });
    bytes.on('data', (chunk) => sent(chunk.length));
    bytes.on('error', (error) => req.destroy(error));
    bytes.pipe(req);
  }).catch((error: unknown) => {
    const code = (error as { code?: unknown }).code;
    throw new CliError('SERVER_UNREACHABLE', `Uploading part ${range.number} to ${target.origin} failed (${typeof code === 'string' ? code : String(error)}).`, EXIT.unreachable);
  });
  if (response.status < 200 || response.status > 299) {
    let body: unknown = null;
    try {
      body = JSON.parse(response.text);
    } catch {
      body = { message: response.text.slice(0, 200) };
    }
    const failure = httpFailure(target.origin, { status: response.status, headers: response.headers, body });
    throw new CliError(failure.code, `Part ${range.number}: ${describeErrorBody(body).message ?? failure.message}`, failure.exitCode, failure.hint);
  }
  const etag = response.headers.etag;
  if (typeof etag !== 'string' || etag === '') throw new CliError('BAD_RESPONSE', `The upload of part ${range.number} answered without an ETag.`, EXIT.serverError);
  return etag;
}
