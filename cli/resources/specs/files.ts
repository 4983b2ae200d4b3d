import { shortDate } from '../../ui/record.js';
import { text } from '../fields.js';
import type { ResourceSpec } from '../spec.js';

/** `till files`: uploaded files (product media, downloadables, avatars); `till files upload PATH` adds one. */
export const files: ResourceSpec = {
  noun: 'files',
  singular: 'file',
  path: '/v1/files/',
  verbs: ['list', 'get', 'update', 'delete'],
  organizationScoped: true,
  getByListing: 'ids',
  filters: [{ flags: '--id <id>', description: 'only these files (repeatable)', param: 'ids', repeatable: true }],
  fields: [text('--name <name>', 'name', 'file name shown to customers'), text('--file-version <version>', 'version', 'version label (e.g. 1.2.0)')],
  columns: [
    { header: 'ID', value: (file) => String(file.id), max: 36 },
    { header: 'NAME', value: (file) => String(file.name) },
    { header: 'SERVICE', value: (file) => String(file.service) },
    { header: 'SIZE', value: (file) => String(file.size_readable) },
    { header: 'UPLOADED', value: (file) => (file.is_uploaded ? 'yes' : 'no') },
    { header: 'CREATED', value: (file) => shortDate(file.created_at) },
  ],
};
