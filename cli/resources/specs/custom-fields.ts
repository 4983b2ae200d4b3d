import { choice, invalidFlag, isObject, mergeProperties, metadata, properties, text } from '../fields.js';
import type { FieldFlag, ResourceSpec } from '../spec.js';

export const CUSTOM_FIELD_TYPES = ['text', 'number', 'date', 'checkbox', 'select'] as const;

/** A flag that sets one key of `properties`. */
const property = (flags: string, key: string, description: string): FieldFlag => ({
  flags,
  description,
  verbs: ['create', 'update'],
  keys: ['properties'],
  apply(value, body) {
    mergeProperties(body, { [key]: value });
  },
});

/** `till custom-fields`: questions checkouts ask (text, number, date, checkbox, select). */
export const customFields: ResourceSpec = {
  noun: 'custom-fields',
  singular: 'custom field',
  path: '/v1/custom-fields/',
  verbs: ['create', 'list', 'get', 'update', 'delete'],
  organizationScoped: true,
  sorting: ['created_at', 'slug', 'name', 'type'],
  filters: [
    { flags: '--type <type>', description: `only this type (repeatable): ${CUSTOM_FIELD_TYPES.join(', ')}`, param: 'type', repeatable: true },
    { flags: '--query <text>', description: 'name or slug contains', param: 'query' },
  ],
  fields: [
    choice('--type <type>', 'type', CUSTOM_FIELD_TYPES, 'kind of answer', { verbs: ['create'], required: true }),
    text('--slug <slug>', 'slug', 'key of the answer in checkouts and orders: lowercase letters, digits, - and _', { required: { question: 'Slug (e.g. company-size)' } }),
    text('--name <name>', 'name', 'name, for you', { required: { question: 'Name' } }),
    property('--label <text>', 'form_label', 'the question shown on the form'),
    property('--help-text <text>', 'form_help_text', 'help shown under it'),
    property('--placeholder <text>', 'form_placeholder', 'placeholder of the input'),
    {
      flags: '--option <value[=label]>',
      description: 'select: a choice (repeatable, in order; replaces the list)',
      verbs: ['create', 'update'],
      repeatable: true,
      keys: ['properties'],
      apply(values, body) {
        const options = values.map((raw) => {
          const at = raw.indexOf('=');
          const value = at < 0 ? raw : raw.slice(0, at);
          if (!value) throw invalidFlag('--option', raw, 'expected VALUE or VALUE=LABEL');
          return { value, label: at < 0 ? raw : raw.slice(at + 1) };
        });
        mergeProperties(body, { options });
      },
    },
    properties('a property of its type, e.g. min_length:=3, textarea:=true, ge:=0'),
    metadata,
  ],
  prepareCreate(body) {
    if (!isObject(body.properties)) body.properties = {};
  },
  // The API needs the field's type repeated on update.
  async prepareUpdate(body, current) {
    if (body.type === undefined) body.type = (await current()).type;
  },
  columns: [
    { header: 'ID', value: (field) => String(field.id), max: 36 },
    { header: 'SLUG', value: (field) => String(field.slug) },
    { header: 'NAME', value: (field) => String(field.name) },
    { header: 'TYPE', value: (field) => String(field.type) },
  ],
};
