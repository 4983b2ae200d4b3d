import { CliError, EXIT } from '../errors.js';
import { parsePair } from '../input/pairs.js';
import { canPrompt, missingArgument, openPrompter } from '../input/prompt.js';
import type { Env, Streams } from '../output.js';
import { renderTable } from '../ui/table.js';
import { optionKey, toInteger } from './fields.js';
import type { Invocation } from './register.js';
import { findOrganization, openSession, organizationId, type Session } from './session.js';
import type { ApiObject, FilterFlag, ResourceSpec } from './spec.js';
import { done, fetchItem, named, show, type ListAnswer, type Target } from './item.js';
import { runWrite } from './write.js';
import { capitalize, withArticle } from './words.js';

/** Carries out one verb of a catalog noun; loaded by program.ts only when such a command runs. */
export async function runVerb(invocation: Invocation, env: Env, streams: Streams): Promise<number> {
  const { spec, verb, options } = invocation;
  const session = await openSession(env, streams, options as { server?: string; json?: boolean });
  switch (verb) {
    case 'list':
      return list(session, spec, options);
    case 'create':
      return runWrite(session, spec, 'create', undefined, options);
    case 'get': {
      const target = await itemOf(session, invocation);
      show(session, await fetchItem(session, spec, target));
      return EXIT.ok;
    }
    case 'update':
      return runWrite(session, spec, 'update', await itemOf(session, invocation), options);
    case 'archive':
    case 'delete':
      return destroy(session, spec, verb, await itemOf(session, invocation), options);
  }
}

/** The positional id (asked for on a terminal when missing), as the object's path. */
async function itemOf(session: Session, { spec, verb, id, options }: Invocation): Promise<Target> {
  if (spec.organizationItem) {
    let orgId = await organizationId(session, id ?? (options.org as string | undefined));
    if (!orgId) {
      const answer = await askFor(session, 'the <org> argument', `${verb} an organization`, 'Organization (id or slug)');
      orgId = (await findOrganization(session, answer)).id as string;
    }
    return { id: orgId, path: `${spec.path}${encodeURIComponent(orgId)}` };
  }
  const chosen = id ?? (await askFor(session, 'the <id> argument', `${verb} ${withArticle(spec.singular)}`, `${capitalize(spec.singular)} id`));
  const path = spec.externalId && options.external ? `${spec.path}external/${encodeURIComponent(chosen)}` : `${spec.path}${encodeURIComponent(chosen)}`;
  return { id: chosen, path };
}

async function askFor(session: Session, name: string, what: string, question: string): Promise<string> {
  if (!canPrompt(session.streams)) throw missingArgument([name], what);
  return (await openPrompter(session.streams)).text(question);
}

async function list(session: Session, spec: ResourceSpec, options: Record<string, unknown>): Promise<number> {
  const query = new URLSearchParams();
  for (const [key, value] of queryOf(spec.filters ?? [], options)) query.append(key, value);
  for (const raw of (options.metadata as string[] | undefined) ?? []) {
    const [key, value] = parsePair(raw, '--metadata');
    query.append(`metadata[${key}]`, String(value));
  }
  for (const criterion of (options.sort as string[] | undefined) ?? []) query.append('sorting', criterion);
  if (spec.organizationScoped) {
    const org = await organizationId(session, options.org as string | undefined);
    if (org) query.set('organization_id', org);
  }
  const all = options.all === true;
  const limit = options.limit === undefined ? (all ? 100 : 10) : toInteger('--limit', String(options.limit), 1);
  let page = options.page === undefined ? 1 : toInteger('--page', String(options.page), 1);
  query.set('limit', String(limit));

  const fetchPage = (n: number) => {
    query.set('page', String(n));
    return session.api.request<ListAnswer>('GET', `${spec.path}?${query}`);
  };
  let answer = await fetchPage(page);
  const items = [...answer.items];
  // The server may clamp the limit, so the page count is the server's, not ours.
  while (all && page < answer.pagination.max_page && answer.items.length > 0) {
    answer = await fetchPage(++page);
    items.push(...answer.items);
  }
  const result: ListAnswer = { items, pagination: answer.pagination };

  const { out, streams } = session;
  out.list(result, items.length, (style) => renderTable(items, spec.columns, { terminal: streams.stdout.isTTY === true, style }), {
    empty: `No ${spec.noun.replace('-', ' ')}${page > 1 ? ` on page ${page}` : ''}.`,
    page: all ? undefined : { page, pagination: answer.pagination, unit: spec.singular, all: true },
  });
  return EXIT.ok;
}

/** Query parameters from filter flags: `--x v` → x=v, `--x` → x=true, `--no-x` → x=false. */
export function queryOf(filters: readonly FilterFlag[], options: Record<string, unknown>): [string, string][] {
  const pairs: [string, string][] = [];
  const seen = new Set<string>();
  for (const filter of filters) {
    const key = optionKey(filter.flags);
    const value = options[key];
    if (value === undefined || seen.has(filter.param)) continue;
    seen.add(filter.param);
    for (const one of Array.isArray(value) ? value : [value]) pairs.push([filter.param, String(one)]);
  }
  return pairs;
}

async function destroy(session: Session, spec: ResourceSpec, verb: 'delete' | 'archive', target: Target, options: Record<string, unknown>): Promise<number> {
  await confirm(session, `${capitalize(verb)} ${spec.singular} ${target.id}?`, verb, options.yes === true);
  if (verb === 'archive') {
    const archived = await session.api.request<ApiObject>('PATCH', target.path, { body: { is_archived: true } });
    done(session, archived, `Archived ${named(spec.singular, archived, target.id)}.`);
    return EXIT.ok;
  }
  const query = new URLSearchParams(queryOf(spec.deleteFlags ?? [], options));
  await session.api.request('DELETE', `${target.path}${query.size > 0 ? `?${query}` : ''}`);
  session.out.result({ id: target.id, deleted: true }, (style) => `${style.green('✓')} Deleted ${spec.singular} ${target.id}.`);
  return EXIT.ok;
}

/** --yes, or a yes on a terminal; off a terminal without --yes, a usage error naming the flag. */
export async function confirm(session: Session, question: string, verb: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!canPrompt(session.streams)) {
    throw new CliError('CONFIRMATION_REQUIRED', `Refusing to ${verb} without --yes: there is no terminal to ask on.`, EXIT.usage, `Add --yes to ${verb} it.`);
  }
  if (!(await (await openPrompter(session.streams)).confirm(question))) throw new CliError('CANCELLED', `Nothing was ${verb === 'archive' ? 'archived' : 'deleted'}.`, EXIT.error);
}
