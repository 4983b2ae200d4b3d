import { CliError, EXIT } from '../errors.js';
import { renderRecord } from '../ui/record.js';
import type { Session } from './session.js';
import type { ApiObject, ResourceSpec } from './spec.js';

/** A list answer: Polar's ListResource. */
export interface ListAnswer {
  items: ApiObject[];
  pagination: { total_count: number; max_page: number };
}

/** The object a verb acts on, and the path that reaches it. */
export interface Target {
  id: string;
  path: string;
}

/** GET one object; files have no GET by id, so they are listed by id instead. */
export async function fetchItem(session: Session, spec: ResourceSpec, target: Target): Promise<ApiObject> {
  if (!spec.getByListing) return session.api.request<ApiObject>('GET', target.path);
  const page = await session.api.request<ListAnswer>('GET', `${spec.path}?${spec.getByListing}=${encodeURIComponent(target.id)}`);
  const found = page.items[0];
  if (!found) throw new CliError('RESOURCE_NOT_FOUND', `No ${spec.singular} ${target.id}.`, EXIT.notFound);
  return found;
}

/** One object: as JSON, or `field  value` lines. */
export function show(session: Session, object: ApiObject): void {
  session.out.result(object, (style) => renderRecord(object, style));
}

