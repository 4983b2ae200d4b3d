import { shortDate } from '../../ui/record.js';
import { choice, invalidFlag, text } from '../fields.js';
import type { ResourceSpec } from '../spec.js';

const PLATFORMS = ['x', 'github', 'facebook', 'instagram', 'youtube', 'tiktok', 'linkedin', 'threads', 'discord', 'other'];

/** `till orgs`: your organizations (`till orgs create` and `till orgs use` are their own commands, in verbs.ts). */
export const organizations: ResourceSpec = {
  noun: 'orgs',
  singular: 'organization',
  path: '/v1/organizations/',
  verbs: ['list', 'get', 'update'],
  organizationScoped: false,
  organizationItem: true,
  filters: [{ flags: '--slug <slug>', description: 'only the organization with this slug', param: 'slug' }],
  sorting: ['created_at', 'name', 'slug'],
  fields: [
    text('--name <name>', 'name', 'display name (3–64 characters)'),
    text('--slug <slug>', 'slug', 'URL name: 3–64 lowercase letters, digits and hyphens'),
    text('--email <email>', 'email', 'contact email'),
    text('--website <url>', 'website', 'website URL'),
    text('--avatar-url <url>', 'avatar_url', 'logo URL (e.g. the public_url of an uploaded organization_avatar file)'),
    text('--country <code>', 'country', 'country, ISO 3166 alpha-2 (e.g. FR)'),
    text('--currency <code>', 'default_presentment_currency', 'default currency of prices (e.g. usd)'),
    choice('--tax-behavior <behavior>', 'default_tax_behavior', ['location', 'inclusive', 'exclusive'], 'default tax behaviour'),
    {
      flags: '--social <platform=url>',
      description: `a social link (repeatable; replaces the list): ${PLATFORMS.join(', ')}`,
      verbs: ['update'],
      repeatable: true,
      keys: ['socials'],
      apply(values, body) {
        body.socials = values.map((value) => {
          const at = value.indexOf('=');
          const platform = value.slice(0, at);
          if (at <= 0 || !PLATFORMS.includes(platform)) throw invalidFlag('--social', value, `expected PLATFORM=URL with a platform among ${PLATFORMS.join(', ')}`);
          return { platform, url: value.slice(at + 1) };
        });
      },
    },
  ],
  columns: [
    { header: 'ID', value: (org) => String(org.id), max: 36 },
    { header: 'SLUG', value: (org) => String(org.slug) },
    { header: 'NAME', value: (org) => String(org.name) },
    { header: 'CREATED', value: (org) => shortDate(org.created_at) },
  ],
};

