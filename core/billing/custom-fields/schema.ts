import { z } from 'zod';
import { Metadata } from '../shared/metadata.js';

export const CUSTOM_FIELD_TYPES = ['checkbox', 'date', 'number', 'select', 'text'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];
export const CUSTOM_FIELD_SORTING = ['created_at', 'slug', 'name', 'type'] as const;

const NonEmpty = z.string().min(1).max(1000);

/** What every field shows on a checkout form. Keys are left out, never null (the SDK refuses null). */
const FormProperties = {
  form_label: NonEmpty.optional(),
  form_help_text: NonEmpty.optional(),
  form_placeholder: NonEmpty.optional(),
};

/** `ge` ≤ `le`, when both bounds are given (numbers; Unix timestamps for dates). */
const Bounded = z
  .object({ ...FormProperties, ge: z.number().int().optional(), le: z.number().int().optional() })
  .refine((p) => p.ge === undefined || p.le === undefined || p.ge <= p.le, { message: 'ge must not be greater than le', path: ['le'] });

const TextProperties = z
  .object({
    ...FormProperties,
    textarea: z.boolean().optional(),
    min_length: z.number().int().min(0).optional(),
    max_length: z.number().int().min(0).optional(),
  })
  .refine((p) => p.min_length === undefined || p.max_length === undefined || p.min_length <= p.max_length, {
    message: 'min_length must not be greater than max_length',
    path: ['max_length'],
  });

const SelectOption = z.object({ value: NonEmpty, label: NonEmpty });

const SelectProperties = z.object({
  ...FormProperties,
  options: z
    .array(SelectOption)
    .min(1)
    .max(1000)
    .superRefine((options, ctx) => {
      const seen = new Set<string>();
      options.forEach((option, index) => {
        if (seen.has(option.value)) ctx.addIssue({ code: 'custom', message: 'Option values must be unique', path: [index, 'value'] });
        seen.add(option.value);
      });
    }),
});

/** Each type with the properties it takes. */
export const PROPERTIES = {
  checkbox: z.object(FormProperties),
  date: Bounded,
  number: Bounded,
  select: SelectProperties,
  text: TextProperties,
} as const satisfies Record<CustomFieldType, z.ZodType>;

export type CustomFieldProperties = z.infer<(typeof PROPERTIES)[CustomFieldType]>;

/** Polar's slug: lower-cased, letters, digits, `-` and `_`; the key the field's values are stored under. */
const Slug = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9_-]{1,100}$/, 'Use 1–100 letters, digits, dashes and underscores');
const Name = z.string().trim().min(1).max(256);

const create = <T extends CustomFieldType>(type: T) =>
  z.object({
    type: z.literal(type),
    slug: Slug,
    name: Name,
    organization_id: z.string().min(1).nullish(),
    metadata: Metadata.optional(),
    properties: PROPERTIES[type],
  });

/** POST /v1/custom-fields: `type` picks the properties schema. */
export const CustomFieldCreate = z.discriminatedUnion('type', [create('checkbox'), create('date'), create('number'), create('select'), create('text')]);
export type CustomFieldCreate = z.infer<typeof CustomFieldCreate>;

const update = <T extends CustomFieldType>(type: T) =>
  z.object({
    type: z.literal(type),
    slug: Slug.nullish(),
    name: Name.nullish(),
    metadata: Metadata.optional(),
    properties: PROPERTIES[type].nullish(),
  });

/**
 * PATCH /v1/custom-fields/{id}: `type` is required and must be the field's own (a field never changes type);
 * `null` leaves name, slug and properties as they are; properties given replace the stored ones whole.
 */
export const CustomFieldUpdate = z.discriminatedUnion('type', [update('checkbox'), update('date'), update('number'), update('select'), update('text')]);
export type CustomFieldUpdate = z.infer<typeof CustomFieldUpdate>;

export interface CustomField {
  id: string;
  organizationId: string;
  type: CustomFieldType;
  slug: string;
  name: string;
  properties: CustomFieldProperties;
  metadata: Metadata;
  createdAt: Date;
  modifiedAt: Date | null;
}
