import { EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import type { ListAnswer } from '../../resources/item.js';
import type { ApiObject } from '../../resources/spec.js';
import { openSession } from '../../resources/session.js';

export interface CreateOrganizationOptions {
  server?: string;
  json?: boolean;
  slug?: string;
}

/**
 * `till orgs create NAME [--slug S]`: a new organization with you as its owner (POST /v1/organizations; the
 * server derives the slug from the name when --slug is not given). Your first organization also becomes the
 * default one for catalog commands on this server, as `till orgs use` would make it.
 */
export async function createOrganization(name: string, options: CreateOrganizationOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const body = { name, ...(options.slug !== undefined ? { slug: options.slug } : {}) };
  const organization = await session.api.request<ApiObject>('POST', '/v1/organizations/', {
    body,
    flagOf: (field) => (field === 'slug' ? '--slug' : field === 'name' ? 'the NAME argument' : undefined),
  });
  const saved = { id: String(organization.id), slug: String(organization.slug), name: String(organization.name) };
  // The config holds the default only when the credentials came from it (not TILL_TOKEN in CI).
  let madeDefault = false;
  if (session.store) {
    const page = await session.api.request<ListAnswer>('GET', '/v1/organizations/?limit=1');
    if (page.pagination.total_count === 1) {
      session.store.setDefaultOrganization(session.server, saved);
      madeDefault = true;
    }
  }
  session.out.result({ ...organization, default: madeDefault }, (style) =>
    [
      `${style.green('✓')} Created ${style.bold(saved.name)} (${saved.slug}); you are its owner.`,
      madeDefault
        ? style.dim(`It is your first organization, so commands on ${session.server} now work in it unless --org says otherwise.`)
        : style.dim(`Run \`till orgs use ${saved.slug}\` to work in it by default, or pass --org ${saved.slug}.`),
    ].join('\n'),
  );
  return EXIT.ok;
}
