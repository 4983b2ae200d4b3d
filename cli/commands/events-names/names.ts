import { EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { openSession, organizationId } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { shortDate } from '../../ui/record.js';
import { renderTable } from '../../ui/table.js';

export interface NamesOptions {
  server?: string;
  json?: boolean;
  org?: string;
  query?: string;
  limit?: string;
  page?: string;
}

/** `till events names`: the event names the organization has seen, how often, first and last. */
export async function eventNames(options: NamesOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const org = await organizationId(session, options.org);
  const query = new URLSearchParams({ limit: options.limit ?? '100', page: options.page ?? '1', sorting: '-last_seen' });
  if (org) query.set('organization_id', org);
  if (options.query) query.set('query', options.query);
  const page = await session.api.request<{ items: ApiObject[]; pagination: { total_count: number; max_page: number } }>('GET', `/v1/events/names?${query}`);
  const pageNumber = Number(query.get('page'));
  session.out.list(page, page.items.length, (style) =>
    renderTable(page.items, [
      { header: 'NAME', value: (row) => String(row.name) },
      { header: 'SOURCE', value: (row) => String(row.source) },
      { header: 'OCCURRENCES', value: (row) => String(row.occurrences) },
      { header: 'FIRST SEEN', value: (row) => shortDate(row.first_seen) },
      { header: 'LAST SEEN', value: (row) => shortDate(row.last_seen) },
    ], { terminal: streams.stdout.isTTY === true, style }),
    { empty: 'No event names.', page: { page: pageNumber, pagination: page.pagination, unit: 'name' } },
  );
  return EXIT.ok;
}
