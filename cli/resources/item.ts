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

/** What names an object for a person, besides its id: its name, email, description or label. */
export function labelOf(object: ApiObject): string | undefined {
  for (const key of ['name', 'email', 'description', 'label', 'comment']) {
    const value = object[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

/**
 * What a command that changed something prints: with --json the whole object (or the fields asked for); otherwise
 * one line saying what happened (`✓ Created product "Pro" (3f…)`), then the URL when the object has one (a
 * checkout's payment page) and any further lines.
 */
export function done(session: Session, object: ApiObject, line: string, more: readonly (string | undefined)[] = []): void {
  session.out.result(object, (style) => [`${style.green('✓')} ${line}`, ...(typeof object.url === 'string' ? [`  ${object.url}`] : []), ...more.filter((text): text is string => !!text)].join('\n'));
}

/** "product "Pro" (3f…)": the noun, the object's label when it has one, its id. */
export function named(singular: string, object: ApiObject, id = String(object.id)): string {
  const label = labelOf(object);
  return `${singular}${label && label !== id ? ` "${label}"` : ''} (${id})`;
}

/** One object: as JSON, or `field  value` lines. */
export function show(session: Session, object: ApiObject): void {
  session.out.result(object, (style) => renderRecord(object, style));
}

