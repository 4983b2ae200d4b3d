import { shortDate } from '../../ui/record.js';
import { choice, isObject, mergeProperties, metadata, properties, text } from '../fields.js';
import type { ResourceSpec } from '../spec.js';

export const BENEFIT_TYPES = ['custom', 'discord', 'github_repository', 'downloadables', 'license_keys', 'meter_credit'] as const;

/** `till benefits`: what a product grants (a note, files, license keys, Discord and GitHub access, meter credits). */
export const benefits: ResourceSpec = {
  noun: 'benefits',
  singular: 'benefit',
  path: '/v1/benefits/',
  verbs: ['create', 'list', 'get', 'update', 'delete'],
  organizationScoped: true,
  metadataFilter: true,
  sorting: ['created_at', 'description', 'type', 'user_order'],
  filters: [
    { flags: '--type <type>', description: `only this type (repeatable): ${BENEFIT_TYPES.join(', ')}`, param: 'type', repeatable: true },
    { flags: '--query <text>', description: 'description contains', param: 'query' },
  ],
  fields: [
    choice('--type <type>', 'type', BENEFIT_TYPES, 'what it grants', { verbs: ['create'], required: true }),
    text('--description <text>', 'description', 'what the customer sees (3–42 characters)', { required: { question: 'Description (what the customer sees)' } }),
    choice('--visibility <visibility>', 'visibility', ['public', 'private', 'draft'], 'who sees it (custom, license_keys and meter_credit only)'),
    {
      flags: '--note <text>',
      description: 'custom: the note shown to customers (Markdown)',
      verbs: ['create', 'update'],
      keys: ['properties'],
      apply(value, body) {
        mergeProperties(body, { note: value });
      },
    },
    {
      flags: '--file <file-id>',
      description: 'downloadables: an uploaded downloadable file (repeatable)',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['properties'],
      apply(values, body) {
        mergeProperties(body, { files: values });
      },
    },
    properties('a property of its type, e.g. role_id=123, units:=100'),
    metadata,
  ],
  // Every benefit type takes a `properties` object; custom's may be empty.
  prepareCreate(body) {
    if (!isObject(body.properties)) body.properties = {};
  },
  // The API needs the benefit's type repeated on update.
  async prepareUpdate(body, current) {
    if (body.type === undefined) body.type = (await current()).type;
  },
  columns: [
    { header: 'ID', value: (benefit) => String(benefit.id), max: 36 },
    { header: 'TYPE', value: (benefit) => String(benefit.type) },
    { header: 'DESCRIPTION', value: (benefit) => String(benefit.description) },
    { header: 'VISIBILITY', value: (benefit) => String(benefit.visibility) },
    { header: 'CREATED', value: (benefit) => shortDate(benefit.created_at) },
  ],
};
