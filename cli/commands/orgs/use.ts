import { openProfileStore } from '../../auth/profiles.js';
import { EXIT } from '../../errors.js';
import { canPrompt, missingArgument, openPrompter } from '../../input/prompt.js';
import type { Env, Streams } from '../../output.js';
import type { ListAnswer } from '../../resources/item.js';
import { findOrganization, openSession } from '../../resources/session.js';

export interface UseOptions {
  server?: string;
  json?: boolean;
  clear?: boolean;
}

/** `till orgs use SLUG`: the organization catalog commands work in on this server when --org does not say. */
export async function useOrganization(idOrSlug: string | undefined, options: UseOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  // Choosing a default is a deliberate write, so the config is opened even in CI mode (TILL_TOKEN + TILL_SERVER).
  const store = session.store ?? (await openProfileStore(env));
  const { out, server } = session;
  if (options.clear) {
    store.setDefaultOrganization(server, undefined);
    out.result({ server, organization: null }, (style) => `${style.green('✓')} No default organization on ${server} any more.`);
    return EXIT.ok;
  }
  const chosen = idOrSlug ?? (await pick(session));
  const organization = await findOrganization(session, chosen);
  const saved = { id: String(organization.id), slug: String(organization.slug), name: String(organization.name) };
  store.setDefaultOrganization(server, saved);
  out.result({ server, organization: saved }, (style) => `${style.green('✓')} Commands on ${server} now work in ${style.bold(saved.name)} (${saved.slug}) unless --org says otherwise.`);
  return EXIT.ok;
}

/** On a terminal, a list of the organizations to choose from. */
async function pick(session: Awaited<ReturnType<typeof openSession>>): Promise<string> {
  if (!canPrompt(session.streams)) throw missingArgument(['the <org> argument'], 'choose the default organization');
  const page = await session.api.request<ListAnswer>('GET', '/v1/organizations/?limit=100&sorting=name');
  const prompter = await openPrompter(session.streams);
  if (page.items.length === 0) return prompter.text('Organization (id or slug)');
  return prompter.select(
    'Default organization',
    page.items.map((org) => ({ value: String(org.id), name: `${String(org.name)} (${String(org.slug)})` })),
  );
}
