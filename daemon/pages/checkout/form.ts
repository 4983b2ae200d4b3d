import type { PaymentMethodInput } from '../../../core/payments/processor.js';
import { fieldOf, type FieldErrors } from '../forms.js';
import { formatMoney, parseMajorInput } from './money.js';
import type { AttachedCustomFieldWire, CheckoutWire, CustomFieldWire } from './types.js';

/** What the customer asked for with the button they pressed. Enter in any field is `update` (never a payment). */
export type Intent = 'pay' | 'apply_discount' | 'remove_discount' | 'update';
const INTENTS: readonly Intent[] = ['pay', 'apply_discount', 'remove_discount', 'update'];

export const ADDRESS_KEYS = ['country', 'state', 'city', 'postal_code', 'line1', 'line2'] as const;
export type AddressKey = (typeof ADDRESS_KEYS)[number];

/** The form's input names; custom fields are `cf_<slug>` (slugs are letters, digits, `-` and `_`). */
export const addressInput = (key: AddressKey) => `address_${key}`;
export const customFieldInput = (slug: string) => `cf_${slug}`;

/** What the checkout's public update takes, in Polar's snake_case. */
export interface PublicUpdate {
  customer_email?: string | null;
  customer_name?: string | null;
  is_business_customer?: boolean;
  customer_billing_name?: string | null;
  customer_tax_id?: string | null;
  customer_billing_address?: Record<AddressKey, string | null> | null;
  custom_field_data?: Record<string, string | number | boolean | null>;
  amount?: number;
  product_id?: string;
  discount_code?: string | null;
}

export interface ParsedCheckoutForm {
  intent: Intent;
  /** The checkout's total when the page was shown: a payment is only taken for the total the customer saw. */
  expectedTotal: number | null;
  update: PublicUpdate;
  /** Everything typed except the card, to show again next to the errors. */
  typed: Record<string, string>;
  errors: FieldErrors;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Reads the posted checkout form into a public update. Formats are checked for every field the customer filled;
 * required fields only when paying, so applying a discount code never complains about an empty name.
 */
export function parseCheckoutForm(checkout: CheckoutWire, body: unknown): ParsedCheckoutForm {
  const rawIntent = fieldOf(body, 'intent');
  const intent: Intent = (INTENTS as readonly string[]).includes(rawIntent) ? (rawIntent as Intent) : 'update';
  const paying = intent === 'pay';
  const typed: Record<string, string> = {};
  const errors: FieldErrors = {};
  const update: PublicUpdate = {};
  const read = (name: string) => (typed[name] = fieldOf(body, name)).trim();

  const expected = fieldOf(body, 'expected_total');
  const expectedTotal = /^\d{1,12}$/.test(expected) ? Number(expected) : null;

  const email = read('customer_email');
  if (email && (!EMAIL.test(email) || email.length > 254)) errors.customer_email = 'Enter an email address like name@example.com.';
  else if (!email && paying) errors.customer_email = 'Enter your email address.';
  else update.customer_email = email || null;

  const name = read('customer_name');
  if (name.length > 256) errors.customer_name = 'That name is too long (256 characters at most).';
  else update.customer_name = name || null;

  // Buying for a business: a billing name (required to pay) and, optionally, a tax ID; the full address follows.
  const business = read('is_business_customer') === 'on';
  update.is_business_customer = business;
  if (business) {
    const billingName = read('customer_billing_name');
    const taxId = read('customer_tax_id');
    if (billingName.length > 256) errors.customer_billing_name = 'That business name is too long (256 characters at most).';
    else if (!billingName && paying) errors.customer_billing_name = 'Enter the business name for the invoice.';
    else update.customer_billing_name = billingName || null;
    if (taxId.length > 64) errors.customer_tax_id = 'That tax ID is too long.';
    else update.customer_tax_id = taxId || null;
  }

  const productId = read('product_id');
  if (productId && productId !== checkout.product_id) {
    if (checkout.products.some((product) => product.id === productId)) update.product_id = productId;
    else errors.product_id = 'Choose one of the products listed.';
  }

  const price = checkout.product_price;
  if (price?.amount_type === 'custom' && !update.product_id) {
    const text = read('amount');
    const amount = parseMajorInput(text, checkout.currency);
    const min = price.minimum_amount ?? null;
    const max = price.maximum_amount ?? null;
    if (amount === null) errors.amount = 'Enter an amount, like 10 or 12.50.';
    else if (min !== null && amount < min) errors.amount = `Pay at least ${formatMoney(min, checkout.currency)}.`;
    else if (max !== null && amount > max) errors.amount = `Pay at most ${formatMoney(max, checkout.currency)}.`;
    else update.amount = amount;
  }

  const address = readAddress(checkout, read, paying, errors);
  if (address !== undefined) update.customer_billing_address = address;

  // Another product has its own custom fields: the ones shown belong to the old one, so they wait for the new form.
  const fields = update.product_id ? [] : (checkout.attached_custom_fields ?? []);
  if (fields.length > 0) {
    const data: Record<string, string | number | boolean | null> = {};
    for (const attached of fields) {
      const value = readCustomField(attached, read, paying, errors);
      if (value !== undefined) data[attached.custom_field.slug] = value;
    }
    update.custom_field_data = data;
  }

  // The checkout service reads an empty code as "remove the discount", null as "leave it".
  if (intent === 'remove_discount') update.discount_code = '';
  else if (checkout.allow_discount_codes) {
    const code = read('discount_code');
    if (code.length > 256) errors.discount_code = 'That discount code is too long.';
    else if (code) update.discount_code = code;
    else if (intent === 'apply_discount') errors.discount_code = 'Enter a discount code to apply.';
  }

  return { intent, expectedTotal, update, typed, errors };
}

function readAddress(
  checkout: CheckoutWire,
  read: (name: string) => string,
  paying: boolean,
  errors: FieldErrors,
): Record<AddressKey, string | null> | null | undefined {
  const modes = checkout.billing_address_fields;
  const shown = ADDRESS_KEYS.filter((key) => modes[key] !== 'disabled');
  if (shown.length === 0) return undefined;
  const values = Object.fromEntries(ADDRESS_KEYS.map((key) => [key, shown.includes(key) ? read(addressInput(key)) || null : null])) as Record<AddressKey, string | null>;
  for (const key of shown) {
    if (modes[key] === 'required' && !values[key] && paying) errors[addressInput(key)] = `Enter your ${ADDRESS_LABELS[key].toLowerCase()}.`;
    if ((values[key]?.length ?? 0) > 256) errors[addressInput(key)] = `That ${ADDRESS_LABELS[key].toLowerCase()} is too long.`;
  }
  // An address is only saved once it has a country; partial lines typed before that are kept on the page.
  if (!values.country) return undefined;
  return { ...values, country: values.country.toUpperCase() } as Record<AddressKey, string | null>;
}

export const ADDRESS_LABELS: Record<AddressKey, string> = {
  country: 'Country',
  state: 'State or province',
  city: 'City',
  postal_code: 'Postal code',
  line1: 'Address line 1',
  line2: 'Address line 2',
};

/** The label a custom field shows: its form label, else its name. */
export const customFieldLabel = (field: CustomFieldWire) => field.properties.form_label ?? field.name;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A custom field's typed value, checked per its properties; undefined when it is in error (kept out of the update). */
function readCustomField(
  attached: AttachedCustomFieldWire,
  read: (name: string) => string,
  paying: boolean,
  errors: FieldErrors,
): string | number | boolean | null | undefined {
  const field = attached.custom_field;
  const input = customFieldInput(field.slug);
  const label = customFieldLabel(field);
  const fail = (message: string) => {
    errors[input] = message;
    return undefined;
  };
  const text = read(input);
  const { ge, le, min_length: minLength, max_length: maxLength, options } = field.properties;

  if (field.type === 'checkbox') {
    const checked = text === 'on' || text === 'true';
    // A required checkbox is a consent: it must be ticked.
    if (!checked && attached.required && paying) return fail(`Tick “${label}” to continue.`);
    return checked;
  }
  if (!text) return attached.required && paying ? fail(`Fill in “${label}”.`) : null;

  switch (field.type) {
    case 'text':
      if (minLength !== undefined && text.length < minLength) return fail(`Use at least ${minLength} characters.`);
      if (maxLength !== undefined && text.length > maxLength) return fail(`Use at most ${maxLength} characters.`);
      return text;
    case 'number': {
      if (!/^-?\d{1,15}$/.test(text)) return fail('Enter a whole number.');
      const value = Number(text);
      if (ge !== undefined && value < ge) return fail(`Enter ${ge} or more.`);
      if (le !== undefined && value > le) return fail(`Enter ${le} or less.`);
      return value;
    }
    case 'date': {
      const match = DATE.exec(text);
      const time = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
      if (!match || Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== text) return fail('Enter a date as YYYY-MM-DD.');
      // ge/le are Unix timestamps (seconds).
      if (ge !== undefined && time / 1000 < ge) return fail(`Choose ${new Date(ge * 1000).toISOString().slice(0, 10)} or later.`);
      if (le !== undefined && time / 1000 > le) return fail(`Choose ${new Date(le * 1000).toISOString().slice(0, 10)} or earlier.`);
      return text;
    }
    case 'select':
      if (!options?.some((option) => option.value === text)) return fail('Choose one of the options.');
      return text;
  }
}

/**
 * The card typed into the form, or the errors that stop it being sent. The number is only ever passed on to
 * the processor: it is neither kept in `typed` nor logged.
 */
export function parseCard(body: unknown): { ok: true; card: PaymentMethodInput } | { ok: false; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const number = fieldOf(body, 'card_number').replace(/[\s-]/g, '');
  const expiry = fieldOf(body, 'card_expiry').replace(/\s/g, '');
  const cvc = fieldOf(body, 'card_cvc').trim();
  if (!number) errors.card_number = 'Enter your card number.';
  else if (!/^\d{12,19}$/.test(number)) errors.card_number = 'Your card number is incomplete or not a number.';
  const match = /^(\d{1,2})\/(\d{2}|\d{4})$/.exec(expiry);
  if (!expiry) errors.card_expiry = "Enter your card's expiry date.";
  else if (!match) errors.card_expiry = 'Enter the expiry date as MM / YY.';
  if (!cvc) errors.card_cvc = "Enter your card's security code.";
  else if (!/^\d{3,4}$/.test(cvc)) errors.card_cvc = "Your card's security code is 3 or 4 digits.";
  if (Object.keys(errors).length > 0 || !match) return { ok: false, errors };
  return { ok: true, card: { kind: 'card', number, expMonth: Number(match[1]), expYear: Number(match[2]), cvc } };
}

/**
 * The payment method a card form sent: the typed card in the sandbox (parseCard), Stripe's ConfirmationToken id
 * otherwise (the Payment Element creates it in the browser; without JavaScript none arrives). `doing` ends the
 * message for a form that sent no token: "pay here", "add a card here".
 */
export function paymentMethodOf(body: unknown, sandbox: boolean, doing: string): { ok: true; method: PaymentMethodInput } | { ok: false; errors: { form?: string; fields?: FieldErrors } } {
  if (sandbox) {
    const card = parseCard(body);
    return card.ok ? { ok: true, method: card.card } : { ok: false, errors: { fields: card.errors } };
  }
  const token = fieldOf(body, 'confirmation_token_id').trim();
  if (!token) return { ok: false, errors: { form: `Your card details did not reach Stripe: JavaScript is needed to ${doing}. Turn it on, reload this page and try again.` } };
  return { ok: true, method: { kind: 'token', token } };
}

/**
 * Where a service error about a body field belongs on the form: Polar's `loc` (`['body', 'custom_field_data', slug]`,
 * `['body', 'customer_billing_address', 'country']`, `['body', 'card_number']`) to the input's name.
 */
export function inputForLocation(loc: readonly unknown[]): string | undefined {
  const path = loc[0] === 'body' ? loc.slice(1) : loc;
  const [head, next] = path.map(String);
  if (!head) return undefined;
  if (head === 'custom_field_data' && next) return customFieldInput(next);
  if (head === 'customer_billing_address') return addressInput(((ADDRESS_KEYS as readonly string[]).includes(next) ? next : 'country') as AddressKey);
  if (head === 'product_price_id') return 'product_id';
  if (head === 'confirmation_token_id') return 'card_number';
  return head;
}
