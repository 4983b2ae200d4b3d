import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Env, Streams } from '../../output.js';
import { openSession, organizationId } from '../../resources/session.js';
import { catalogOfOrganization, keysToAdopt } from '../../catalog/pull.js';
import { catalogOrganization, readOrganization } from '../../catalog/state.js';
import { count } from '../../resources/words.js';

export interface PullOptions {
  server?: string;
  org?: string;
  json?: boolean;
  output?: string;
}

/**
 * `till pull [--output FILE]`: the organization as a catalog file. Objects no key names yet are given one
 * (from their name) and recorded, so that `till plan` of the pulled file shows nothing to change.
 */
export async function pull(options: PullOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const organization = await catalogOrganization(session.api, await organizationId(session, options.org));
  const now = new Date();
  let state = await readOrganization(session.api, organization);
  const adopted = keysToAdopt(state, now);
  for (const binding of adopted) await session.api.request('POST', '/v1/catalog/keys', { body: { organization_id: String(organization.id), ...binding } });
  if (adopted.length > 0) state = { ...state, keys: [...state.keys, ...adopted] };
  const catalog = catalogOfOrganization(state, now);
  const asJson = options.output ? extname(options.output).toLowerCase() === '.json' : options.json !== undefined && options.json !== false;
  let text: string;
  if (asJson) {
    text = `${JSON.stringify({ $schema: `${session.server}/v1/catalog/schema.json`, ...catalog }, null, 2)}\n`;
  } else {
    const yaml = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
    const stringify = yaml.stringify ?? yaml.default!.stringify;
    text = `# yaml-language-server: $schema=${session.server}/v1/catalog/schema.json\n${stringify(catalog, { lineWidth: 0 })}`;
  }
  if (options.output) {
    await writeFile(options.output, text);
    session.out.note(`Wrote ${options.output}${adopted.length ? ` (${count(adopted.length, 'object')} given a key)` : ''}.`);
  } else {
    streams.stdout.write(text);
  }
  return 0;
}
