import type { FieldErrors } from '../../forms.js';
import { customFieldInput, customFieldLabel } from '../form.js';
import type { AttachedCustomFieldWire, CheckoutWire } from '../types.js';
import { CheckboxControl, SelectControl, TextControl } from './Controls.js';

const isoDay = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** What a custom field shows: what was typed, else what the checkout has saved for it. */
function shownValue(checkout: CheckoutWire, slug: string, typed?: Record<string, string>): string {
  const typedValue = typed?.[customFieldInput(slug)];
  if (typedValue !== undefined) return typedValue;
  const saved = checkout.custom_field_data?.[slug];
  if (saved === null || saved === undefined) return '';
  // Dates may come back as timestamps; the date input wants the day.
  return typeof saved === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(saved) ? saved.slice(0, 10) : String(saved);
}

function CustomField({ attached, checkout, typed, error }: { attached: AttachedCustomFieldWire; checkout: CheckoutWire; typed?: Record<string, string>; error?: string }) {
  const field = attached.custom_field;
  const { form_help_text: hint, form_placeholder: placeholder, ge, le, min_length: minLength, max_length: maxLength } = field.properties;
  const name = customFieldInput(field.slug);
  const label = attached.required ? customFieldLabel(field) : `${customFieldLabel(field)} (optional)`;
  const value = shownValue(checkout, field.slug, typed);
  const common = { name, label, hint, error, required: attached.required };
  switch (field.type) {
    case 'checkbox': {
      const saved = checkout.custom_field_data?.[field.slug];
      const checked = typed ? value === 'on' || value === 'true' : saved === true;
      return <CheckboxControl {...common} label={customFieldLabel(field)} checked={checked} />;
    }
    case 'select':
      return <SelectControl {...common} value={value} options={field.properties.options ?? []} placeholder={placeholder ?? 'Choose…'} />;
    case 'number':
      return <TextControl {...common} value={value} type="number" inputMode="numeric" step="1" min={ge} max={le} placeholder={placeholder} />;
    case 'date':
      return (
        <TextControl
          {...common}
          value={value}
          type="date"
          min={ge === undefined ? undefined : isoDay(ge)}
          max={le === undefined ? undefined : isoDay(le)}
          placeholder={placeholder ?? 'YYYY-MM-DD'}
        />
      );
    case 'text':
      return <TextControl {...common} value={value} textarea={field.properties.textarea} minLength={minLength} maxLength={maxLength} placeholder={placeholder} />;
  }
}

/** The product's custom fields, in the order the seller attached them. */
export function CustomFields({ checkout, typed, errors }: { checkout: CheckoutWire; typed?: Record<string, string>; errors: FieldErrors }) {
  const fields = [...(checkout.attached_custom_fields ?? [])].sort((a, b) => a.order - b.order);
  if (fields.length === 0) return null;
  return (
    <fieldset className="group">
      <legend>A few more details</legend>
      {fields.map((attached) => (
        <CustomField key={attached.custom_field_id} attached={attached} checkout={checkout} typed={typed} error={errors[customFieldInput(attached.custom_field.slug)]} />
      ))}
    </fieldset>
  );
}
