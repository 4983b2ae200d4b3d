import { ADDRESS_COUNTRIES } from '../../../../core/billing/customers/address.js';
import type { FieldErrors } from '../../forms.js';
import { ADDRESS_KEYS, ADDRESS_LABELS, addressInput, type AddressKey } from '../form.js';
import type { CheckoutWire } from '../types.js';
import { SelectControl, TextControl } from './Controls.js';

let countryOptions: { value: string; label: string }[] | undefined;

/** The countries a billing address may name, by their English names (built once, on first use). */
function countries() {
  if (!countryOptions) {
    const names = new Intl.DisplayNames(['en'], { type: 'region' });
    countryOptions = ADDRESS_COUNTRIES.map((code) => ({ value: code, label: names.of(code) ?? code })).sort((a, b) => a.label.localeCompare(b.label));
  }
  return countryOptions;
}

const AUTOCOMPLETE: Record<AddressKey, string> = {
  country: 'billing country',
  state: 'billing address-level1',
  city: 'billing address-level2',
  postal_code: 'billing postal-code',
  line1: 'billing address-line1',
  line2: 'billing address-line2',
};

/** What the address inputs show: what was typed, else the checkout's saved address. */
export function addressValues(checkout: CheckoutWire, typed?: Record<string, string>): Record<AddressKey, string> {
  const saved = checkout.customer_billing_address;
  return Object.fromEntries(
    ADDRESS_KEYS.map((key) => {
      const typedValue = typed?.[addressInput(key)];
      if (typedValue !== undefined) return [key, typedValue];
      const value = saved?.[key] ?? '';
      // Polar stores US and CA states as `US-NY`; the customer typed `NY`.
      return [key, key === 'state' && saved ? value.replace(new RegExp(`^${saved.country}-`), '') : value];
    }),
  ) as Record<AddressKey, string>;
}

/** The billing address inputs the checkout asks for, in the order people write an address. */
export function AddressFields({ checkout, typed, errors }: { checkout: CheckoutWire; typed?: Record<string, string>; errors: FieldErrors }) {
  const modes = checkout.billing_address_fields;
  const order: AddressKey[] = ['line1', 'line2', 'city', 'postal_code', 'state', 'country'];
  const shown = order.filter((key) => modes[key] !== 'disabled');
  if (shown.length === 0) return null;
  const values = addressValues(checkout, typed);
  return (
    <fieldset className="group">
      <legend>Billing address</legend>
      {shown.map((key) => {
        const required = modes[key] === 'required';
        const label = required ? ADDRESS_LABELS[key] : `${ADDRESS_LABELS[key]} (optional)`;
        return key === 'country' ? (
          <SelectControl
            key={key}
            name={addressInput(key)}
            label={label}
            value={values.country.toUpperCase()}
            options={countries()}
            placeholder="Choose a country"
            required={required}
            error={errors[addressInput(key)]}
            autoComplete={AUTOCOMPLETE[key]}
          />
        ) : (
          <TextControl
            key={key}
            name={addressInput(key)}
            label={label}
            value={values[key]}
            required={required}
            error={errors[addressInput(key)]}
            autoComplete={AUTOCOMPLETE[key]}
            maxLength={256}
            hint={key === 'state' ? 'For the United States and Canada, the two-letter code (NY, QC).' : undefined}
          />
        );
      })}
    </fieldset>
  );
}
