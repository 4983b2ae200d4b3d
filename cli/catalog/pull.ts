import { KINDS, SECTION, serverFields, type ApiObject, type Kind } from './model.js';
import { isArchived, withoutGuildToken, type OrganizationState } from './plan.js';

/** A key for an object no key names yet: from its name, made unique within its kind. */
export function suggestKey(object: ApiObject, taken: Set<string>, kind: Kind): string {
  const base =
    String(object.slug ?? object.name ?? object.description ?? (object.country ? `${String(object.country)}-${String(object.state ?? '')}` : kind))
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || kind.replace('_', '-');
  let key = base;
  for (let n = 2; taken.has(key); n++) key = `${base}-${n}`;
  taken.add(key);
  return key;
}

/** Keys to give the organization's live objects that have none (`till pull` adopts them). */
export function keysToAdopt(state: OrganizationState, now: Date): { kind: Kind; key: string; object_id: string }[] {
  const adopted: { kind: Kind; key: string; object_id: string }[] = [];
  for (const kind of KINDS) {
    const taken = new Set(state.keys.filter((binding) => binding.kind === kind).map((binding) => binding.key));
    for (const object of state.objects[kind]) {
      if (isArchived(kind, object, now) || state.keys.some((binding) => binding.kind === kind && binding.object_id === String(object.id))) continue;
      adopted.push({ kind, key: suggestKey(object, taken, kind), object_id: String(object.id) });
    }
  }
  return adopted;
}

const ORGANIZATION_FIELDS = ['name', 'email', 'website', 'subscription_settings', 'notification_settings', 'default_tax_behavior'] as const;

/** The organization as a catalog file (every live object, under its key), so that `plan` of it shows nothing. */
export function catalogOfOrganization(state: OrganizationState, now: Date): Record<string, unknown> {
  const keyOf = new Map(state.keys.map((binding) => [`${binding.kind}:${binding.object_id}`, binding.key]));
  const refs = { keyOf: (kind: Kind, id: string) => keyOf.get(`${kind}:${id}`) ?? id };
  const organization: Record<string, unknown> = {};
  for (const field of ORGANIZATION_FIELDS) if (state.organization[field] !== undefined) organization[field] = state.organization[field];
  const file: Record<string, unknown> = { version: 1, organization };
  for (const kind of KINDS) {
    const entries: Record<string, unknown>[] = [];
    for (const object of state.objects[kind]) {
      const key = keyOf.get(`${kind}:${String(object.id)}`);
      if (!key || isArchived(kind, object, now)) continue;
      const fields = serverFields(kind, object, refs);
      // The signing secret stays out of the file: name it with `secret: ${env:NAME}` to manage it.
      if (kind === 'webhook') delete fields.secret;
      // Nor a Discord benefit's guild token: name it with `guild_token: ${env:NAME}` to manage it.
      if (kind === 'benefit') fields.properties = withoutGuildToken(fields.properties);
      entries.push({ key, ...fields });
    }
    entries.sort((a, b) => String(a.key).localeCompare(String(b.key)));
    file[SECTION[kind]] = entries;
  }
  return file;
}
