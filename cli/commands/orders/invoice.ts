import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CliError, EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { openSession } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';

export interface InvoiceOptions {
  server?: string;
  json?: boolean;
  output?: string;
  force?: boolean;
}

const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

/**
 * `till orders invoice ID`: asks the daemon for the order's invoice link (it generates the invoice on first ask),
 * downloads the PDF from it and saves it: to --output, else Invoice-<number>.pdf here; `--output -` writes the
 * bytes to stdout for a pipe.
 */
export async function saveInvoice(id: string, options: InvoiceOptions, env: Env, streams: Streams): Promise<number> {
  if (options.output === '-' && options.json) throw new CliError('CONFLICTING_FLAGS', '--output - writes the PDF to stdout, so it cannot go with --json.', EXIT.usage);
  const session = await openSession(env, streams, options);
  const path = `/v1/orders/${encodeURIComponent(id)}`;
  const order = await session.api.request<ApiObject>('GET', path);
  const { url } = await session.api.request<{ url: string }>('GET', `${path}/invoice`);

  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new CliError('UNREACHABLE', `Could not download the invoice from ${url}: ${(error as Error).message}`, EXIT.unreachable);
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200 || !String(response.headers.get('content-type')).startsWith('application/pdf')) {
    throw new CliError('INVOICE_DOWNLOAD_FAILED', `The invoice link answered ${response.status} instead of a PDF.`, response.status >= 500 ? EXIT.serverError : EXIT.error);
  }

  if (options.output === '-') {
    streams.stdout.write(bytes);
    return EXIT.ok;
  }
  const number = String(order.invoice_number ?? id);
  const file = resolve(options.output ?? `Invoice-${number.replace(/[^\w.-]/g, '_')}.pdf`);
  try {
    await writeFile(file, bytes, { flag: options.force ? 'w' : 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new CliError('FILE_EXISTS', `${file} already exists.`, EXIT.error, 'Add --force to overwrite it, or choose another --output.');
    throw new CliError('WRITE_FAILED', `Could not write ${file}: ${(error as Error).message}`, EXIT.error);
  }
  session.out.result(
    { order_id: order.id, invoice_number: order.invoice_number, path: file, bytes: bytes.length },
    (style) => `${style.green('✓')} Saved invoice ${number} to ${file} (${kilobytes(bytes.length)}).`,
  );
  return EXIT.ok;
}
