import { KINDS, organizationFields, serverFields, serverPrice, type ApiObject, type Entry, type Kind, type Refs } from './model.js';

/*
 * The plan: what `till apply` would do to make the organization match the file, field by field. Pure: it
 * takes the file's entries and the organization as read, and answers steps; apply.ts carries them out.
 */

export interface Change {
  field: string;
  from?: unknown;
  to?: unknown;
}

export type Action = 'create' | 'update' | 'replace' | 'archive' | 'migrate';

export interface Step {
  action: Action;
  kind: Kind | 'organization';
  key: string;
  /** The object's id, when it exists. */
  id?: string;
  changes: Change[];
  /** The entry the file asks for (absent for archives and the organization). */
  entry?: Entry;
  /** The object as the organization has it (updates, replacements). */
  current?: ApiObject;
  /** A migration's subscriptions: each moves onto the product's current fixed price in its currency. */
  subscriptions?: { id: string; currency: string }[];
}

/** An object of the organization the plan leaves as it is though the file does not name it. */
export interface Untouched {
  kind: Kind;
  id: string;
  key?: string;
  name: string;
  reason: 'not_in_file' | 'not_archivable';
}

export interface Plan {
  organizationId: string;
  steps: Step[];
  untouched: Untouched[];
}

/** The organization as read for a plan: its settings, its objects by kind and the keys the file gave them. */
export interface OrganizationState {
  organization: ApiObject;
  /** Live objects of each kind, plus archived ones a key still names. */
  objects: Record<Kind, ApiObject[]>;
  keys: { kind: Kind; key: string; object_id: string }[];
  /** Live subscriptions (active, trialing) by product id, read for the products whose file entry migrates them. */
  subscriptions?: Record<string, ApiObject[]>;
}

/** JSON with sorted keys: two values are equal when this is. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const equal = (a: unknown, b: unknown) => canonical(a) === canonical(b);

/** Reads ids as keys through the organization's bindings; an object no key names shows as its id. */
export function refsOf(state: OrganizationState): Refs {
  const byId = new Map(state.keys.map((binding) => [`${binding.kind}:${binding.object_id}`, binding.key]));
  return { keyOf: (kind, id) => byId.get(`${kind}:${id}`) ?? id };
}

/** Whether an object is archived (or, for the kinds without an archive, its equivalent: disabled, ended). */
export function isArchived(kind: Kind, object: ApiObject, now: Date): boolean {
  if (kind === 'product') return object.is_archived === true;
  if (kind === 'meter') return object.archived_at != null || object.is_archived === true;
  if (kind === 'webhook') return object.enabled === false;
  if (kind === 'discount') return typeof object.ends_at === 'string' && Date.parse(object.ends_at) <= now.getTime();
  return false;
}

/** Kinds that `--prune` can archive; the others (benefits, custom fields, tax rates) have no archived state. */
export const ARCHIVABLE: ReadonlySet<Kind> = new Set(['product', 'meter', 'webhook', 'discount']);

const displayName = (object: ApiObject) => String(object.name ?? object.description ?? object.url ?? (object.country ? `${String(object.country)}${object.state ? ` ${String(object.state)}` : ''}` : object.id));

/** The steps that make the organization match the file: creates, updates and replacements, then archives (`prune`). */
export function buildPlan(entries: readonly Entry[], organizationSettings: Record<string, unknown> | undefined, state: OrganizationState, options: { prune: boolean; now: Date }): Plan {
  const organizationId = String(state.organization.id);
  const refs = refsOf(state);
  const steps: Step[] = [];
  if (organizationSettings && Object.keys(organizationSettings).length > 0) {
    const current = organizationFields(state.organization, organizationSettings);
    const changes = fieldChanges(current, organizationSettings);
    if (changes.length > 0) steps.push({ action: 'update', kind: 'organization', key: String(state.organization.slug ?? organizationId), id: organizationId, changes });
  }
  const named = new Set<string>();
  for (const entry of entries) {
    const object = boundObject(state, entry.kind, entry.key);
    if (!object) {
      steps.push({ action: 'create', kind: entry.kind, key: entry.key, changes: creationChanges(entry.fields), entry });
      continue;
    }
    const id = String(object.id);
    named.add(`${entry.kind}:${id}`);
    const current = serverFields(entry.kind, object, refs);
    // A Discord token is managed only when the file names one (from the environment), like a webhook's secret.
    if (entry.kind === 'benefit' && !hasGuildToken(entry.fields.properties)) current.properties = withoutGuildToken(current.properties);
    const changes = entry.kind === 'product' ? productChanges(current, entry.fields) : fieldChanges(current, entry.fields);
    // Webhooks (enabled) and discounts (ends_at) carry their archived state in fields the diff compares already.
    if ((entry.kind === 'product' || entry.kind === 'meter') && isArchived(entry.kind, object, options.now)) {
      changes.unshift({ field: 'is_archived', from: true, to: false });
    }
    // A tax rate is never edited in place: the new rate replaces the old one.
    const action: Action = entry.kind === 'tax_rate' ? 'replace' : 'update';
    if (changes.length > 0) steps.push({ action, kind: entry.kind, key: entry.key, id, changes, entry, current: object });
    if (entry.migrate) {
      const migration = migrationStep(entry, object, state.subscriptions?.[id] ?? [], refs);
      if (migration) steps.push(migration);
    }
  }
  const untouched: Untouched[] = [];
  const keyOf = new Map(state.keys.map((binding) => [`${binding.kind}:${binding.object_id}`, binding.key]));
  for (const kind of [...KINDS].reverse()) {
    for (const object of state.objects[kind]) {
      const id = String(object.id);
      if (named.has(`${kind}:${id}`) || isArchived(kind, object, options.now)) continue;
      const key = keyOf.get(`${kind}:${id}`);
      if (options.prune && ARCHIVABLE.has(kind)) {
        steps.push({ action: 'archive', kind, key: key ?? id, id, changes: [archiveChange(kind, object, options.now)] });
      } else {
        untouched.push({ kind, id, key, name: displayName(object), reason: options.prune ? 'not_archivable' : 'not_in_file' });
      }
    }
  }
  return { organizationId, steps, untouched };
}

/**
 * The subscriptions of a product to move onto its current price (`migrate_subscriptions`): those whose fixed
 * price is not one the file keeps, in a currency the file has a fixed price in (the others cannot move and stay).
 */
function migrationStep(entry: Entry, object: ApiObject, subscriptions: readonly ApiObject[], refs: Refs): Step | undefined {
  const live = ((object.prices as ApiObject[]) ?? []).filter((price) => !price.is_archived);
  const wanted = entry.fields.prices as Record<string, unknown>[];
  const { kept } = matchPrices(
    live.map((price) => serverPrice(price, refs)),
    wanted,
  );
  const keptIds = new Set(kept.map((item) => String(live[item.index].id)));
  const changes: Change[] = [];
  const moving: { id: string; currency: string }[] = [];
  for (const subscription of subscriptions) {
    const prices = (subscription.prices as ApiObject[]) ?? [];
    const fixed = prices.find((price) => price.amount_type === 'fixed') ?? prices[0];
    if (!fixed || keptIds.has(String(fixed.id))) continue;
    const currency = String(subscription.currency ?? fixed.price_currency);
    const target = wanted.find((price) => price.amount_type === 'fixed' && price.price_currency === currency);
    if (!target) continue;
    moving.push({ id: String(subscription.id), currency });
    changes.push({ field: `subscription ${String(subscription.id)}`, from: serverPrice(fixed, refs), to: target });
  }
  if (moving.length === 0) return undefined;
  return { action: 'migrate', kind: 'product', key: entry.key, id: String(object.id), changes, entry, subscriptions: moving };
}

function archiveChange(kind: Kind, object: ApiObject, now: Date): Change {
  if (kind === 'webhook') return { field: 'enabled', from: true, to: false };
  if (kind === 'discount') return { field: 'ends_at', from: object.ends_at ?? null, to: now.toISOString() };
  return { field: 'is_archived', from: false, to: true };
}

/** The object a key names, if it still exists. */
function boundObject(state: OrganizationState, kind: Kind, key: string): ApiObject | undefined {
  const binding = state.keys.find((item) => item.kind === kind && item.key === key);
  return binding ? state.objects[kind].find((object) => String(object.id) === binding.object_id) : undefined;
}

const hasGuildToken = (properties: unknown) => Boolean(properties && typeof properties === 'object' && 'guild_token' in properties);

/** Properties without a Discord benefit's guild token (what `till pull` writes, and what a file without one manages). */
export function withoutGuildToken(properties: unknown): unknown {
  if (!hasGuildToken(properties)) return properties;
  const { guild_token: _token, ...rest } = properties as Record<string, unknown>;
  void _token;
  return rest;
}

/** A value as a plan shows it: a Discord guild token never appears, only that it is there. */
const hidden = (value: unknown, replacement: string) => (hasGuildToken(value) ? { ...(value as Record<string, unknown>), guild_token: replacement } : value);

/** Every field the file names whose value differs (fields the file leaves out, like a webhook's secret, are not managed). */
export function fieldChanges(current: Record<string, unknown>, wanted: Record<string, unknown>): Change[] {
  const changes: Change[] = [];
  for (const [field, to] of Object.entries(wanted)) {
    const from = current[field];
    if (equal(from, to)) continue;
    if (field === 'secret') changes.push({ field, from: '(hidden)', to: '(from the environment)' });
    else if (field === 'properties') changes.push({ field, from: hidden(from ?? null, '(hidden)'), to: hidden(to, '(from the environment)') });
    else changes.push({ field, from: from ?? null, to });
  }
  return changes;
}

/** A product's changes; its prices are compared as a set: a price no longer wanted is archived, a new one created. */
function productChanges(current: Record<string, unknown>, wanted: Record<string, unknown>): Change[] {
  const { prices: currentPrices, ...currentRest } = current;
  const { prices: wantedPrices, ...wantedRest } = wanted;
  const changes = fieldChanges(currentRest, wantedRest);
  const { kept, added, removed } = matchPrices(currentPrices as unknown[], wantedPrices as unknown[]);
  void kept;
  for (const price of removed) changes.push({ field: 'price', from: price, to: null });
  for (const price of added) changes.push({ field: 'price', from: null, to: price });
  return changes;
}

/** Pairs current prices with wanted ones of equal terms; the rest are to archive (removed) and to create (added). */
export function matchPrices<T>(current: readonly T[], wanted: readonly unknown[]): { kept: { current: T; index: number }[]; added: unknown[]; removed: T[] } {
  const left = current.map((price, index) => ({ price, index, used: false }));
  const kept: { current: T; index: number }[] = [];
  const added: unknown[] = [];
  for (const price of wanted) {
    const match = left.find((item) => !item.used && equal(item.price, price));
    if (match) {
      match.used = true;
      kept.push({ current: match.price, index: match.index });
    } else {
      added.push(price);
    }
  }
  return { kept, added, removed: left.filter((item) => !item.used).map((item) => item.price) };
}

function creationChanges(fields: Record<string, unknown>): Change[] {
  return Object.entries(fields)
    .filter(([field, value]) => field !== 'secret' && value !== null && !(Array.isArray(value) && value.length === 0) && !(value && typeof value === 'object' && Object.keys(value).length === 0))
    .map(([field, to]) => ({ field, to: field === 'properties' ? hidden(to, '(from the environment)') : to }));
}
