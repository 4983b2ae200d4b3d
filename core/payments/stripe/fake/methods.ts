import { TEST_IBANS, TEST_METHOD_IDS, methodOfCardNumber, type TestMethod } from './catalogue.js';
import type { FakeContext } from './context.js';
import { StripeFakeError, invalidParam, missing } from './errors.js';
import { bool, metadataOf, obj, str, type FormObject } from './form.js';
import { stripeId, unixSeconds } from './ids.js';
import { noAddress, type ConfirmationToken, type Customer, type PaymentMethod } from './state.js';

type CardDetails = TestMethod & { expMonth: number; expYear: number };

export function createCustomer(ctx: FakeContext, form: FormObject): Customer {
  const customer: Customer = {
    id: stripeId('cus'),
    object: 'customer',
    created: unixSeconds(ctx.now()),
    email: str(form, 'email') ?? null,
    name: str(form, 'name') ?? null,
    description: str(form, 'description') ?? null,
    metadata: metadataOf(form),
    invoice_settings: { default_payment_method: str(obj(form, 'invoice_settings'), 'default_payment_method') ?? null },
    livemode: false,
  };
  ctx.state.customers.set(customer.id, customer);
  ctx.emit('customer.created', customer);
  return customer;
}

export function getCustomer(ctx: FakeContext, id: string, param = 'id'): Customer {
  const customer = ctx.state.customers.get(id);
  if (!customer) throw missing('customer', id, param);
  return customer;
}

export function updateCustomer(ctx: FakeContext, id: string, form: FormObject): Customer {
  const customer = getCustomer(ctx, id);
  const defaultMethod = str(obj(form, 'invoice_settings'), 'default_payment_method');
  if (defaultMethod !== undefined && defaultMethod !== '') {
    const method = getPaymentMethod(ctx, defaultMethod, 'invoice_settings[default_payment_method]');
    if (method.customer !== customer.id) {
      throw invalidParam('invoice_settings[default_payment_method]', `No such PaymentMethod: '${defaultMethod}'; It's possible this PaymentMethod exists on one of your connected accounts, in which case you should retry this request on that connected account.`, 'resource_missing');
    }
  }
  const updated: Customer = {
    ...customer,
    email: str(form, 'email') ?? customer.email,
    name: str(form, 'name') ?? customer.name,
    metadata: metadataOf(form, customer.metadata),
    invoice_settings: { default_payment_method: defaultMethod === undefined ? customer.invoice_settings.default_payment_method : defaultMethod || null },
  };
  ctx.state.customers.set(id, updated);
  ctx.emit('customer.updated', updated);
  return updated;
}

/** Checks a typed card (as Stripe.js hands it over) and answers what it will do. */
function cardFromForm(card: FormObject, now: Date): CardDetails {
  const number = str(card, 'number') ?? '';
  const method = methodOfCardNumber(number);
  if (!method || !passesLuhn(number.replace(/[\s-]/g, ''))) {
    throw new StripeFakeError(402, { type: 'card_error', code: 'incorrect_number', param: 'number', message: 'Your card number is incorrect.' });
  }
  const expMonth = Number(str(card, 'exp_month'));
  const rawYear = Number(str(card, 'exp_year'));
  const expYear = rawYear < 100 ? 2000 + rawYear : rawYear;
  if (!Number.isInteger(expMonth) || expMonth < 1 || expMonth > 12) {
    throw new StripeFakeError(402, { type: 'card_error', code: 'invalid_expiry_month', param: 'exp_month', message: "Your card's expiration month is invalid." });
  }
  const year = now.getUTCFullYear();
  if (!Number.isInteger(expYear) || expYear < year || (expYear === year && expMonth < now.getUTCMonth() + 1)) {
    throw new StripeFakeError(402, { type: 'card_error', code: 'invalid_expiry_year', param: 'exp_year', message: "Your card's expiration year is invalid." });
  }
  return { ...method, expMonth, expYear };
}

function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** What `payment_method_data` (or a PaymentMethod create) describes: a card or a SEPA account. */
function detailsFromData(data: FormObject, now: Date): CardDetails {
  const type = str(data, 'type');
  if (type === 'card') return cardFromForm(obj(data, 'card'), now);
  if (type === 'sepa_debit') {
    const iban = (str(obj(data, 'sepa_debit'), 'iban') ?? '').replace(/\s/g, '').toUpperCase();
    const method = TEST_IBANS[iban];
    if (!method) throw invalidParam('sepa_debit[iban]', 'The IBAN you provided is invalid; use a test IBAN such as AT321904300235473204.', 'invalid_bank_account_iban');
    return { ...method, expMonth: 0, expYear: 0 };
  }
  throw invalidParam('type', `Invalid type: must be one of card, sepa_debit (the payment methods this fake knows)`, 'parameter_invalid_string');
}

function methodPreview(details: CardDetails, billing: FormObject): ConfirmationToken['payment_method_preview'] {
  const address = obj(billing, 'address');
  return {
    type: details.type,
    customer: null,
    allow_redisplay: 'unspecified',
    billing_details: {
      address: { ...noAddress(), ...Object.fromEntries(Object.entries(address).filter(([, value]) => typeof value === 'string')) },
      email: str(billing, 'email') ?? null,
      name: str(billing, 'name') ?? null,
      phone: str(billing, 'phone') ?? null,
    },
    ...(details.type === 'card'
      ? {
          card: {
            brand: details.brand,
            display_brand: details.brand,
            last4: details.last4,
            exp_month: details.expMonth,
            exp_year: details.expYear,
            country: details.country,
            funding: details.funding,
            checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' as const },
            wallet: null,
          },
        }
      : { sepa_debit: { bank_code: '19043', country: details.country, last4: details.last4 } }),
  };
}

function storeMethod(ctx: FakeContext, details: CardDetails, billing: FormObject, metadata: Record<string, string> = {}): PaymentMethod {
  const method: PaymentMethod = {
    id: stripeId('pm'),
    object: 'payment_method',
    created: unixSeconds(ctx.now()),
    livemode: false,
    metadata,
    ...methodPreview(details, billing),
  };
  ctx.state.paymentMethods.set(method.id, method);
  ctx.state.behaviourOf.set(method.id, details);
  return method;
}

/** A test shortcut such as `pm_card_visa` becomes a fresh PaymentMethod each time it is used, as at Stripe. */
function fromShortcut(ctx: FakeContext, id: string): PaymentMethod | undefined {
  const number = TEST_METHOD_IDS[id];
  if (!number) return undefined;
  const now = ctx.now();
  return storeMethod(ctx, { ...methodOfCardNumber(number)!, expMonth: now.getUTCMonth() + 1, expYear: now.getUTCFullYear() + 1 }, {});
}

export function getPaymentMethod(ctx: FakeContext, id: string, param = 'payment_method'): PaymentMethod {
  const method = ctx.state.paymentMethods.get(id) ?? fromShortcut(ctx, id);
  if (!method) throw missing('PaymentMethod', id, param);
  return method;
}

export function createPaymentMethod(ctx: FakeContext, form: FormObject): PaymentMethod {
  return storeMethod(ctx, detailsFromData(form, ctx.now()), obj(form, 'billing_details'), metadataOf(form));
}

export function behaviourOf(ctx: FakeContext, methodId: string): TestMethod {
  const behaviour = ctx.state.behaviourOf.get(methodId);
  if (!behaviour) throw new Error(`the fake lost the behaviour of ${methodId}`);
  return behaviour;
}

/** Attaches a method to a customer; Stripe checks the card with its bank, so a card that declines is refused. */
export function attachPaymentMethod(ctx: FakeContext, id: string, customerId: string): PaymentMethod {
  const method = getPaymentMethod(ctx, id, 'payment_method');
  const customer = getCustomer(ctx, customerId, 'customer');
  if (method.customer && method.customer !== customer.id) {
    throw invalidParam('payment_method', 'The payment method you provided has already been attached to a customer.', 'payment_method_unexpected_state');
  }
  const behaviour = behaviourOf(ctx, method.id);
  if (behaviour.behaviour === 'declines' && behaviour.decline) {
    throw new StripeFakeError(402, { type: 'card_error', code: behaviour.decline.code, decline_code: behaviour.decline.declineCode, message: behaviour.decline.message, param: '' }, true);
  }
  if (method.customer === customer.id) return method;
  const attached = { ...method, customer: customer.id };
  ctx.state.paymentMethods.set(method.id, attached);
  ctx.emit('payment_method.attached', attached);
  return attached;
}

export function detachPaymentMethod(ctx: FakeContext, id: string): PaymentMethod {
  const method = getPaymentMethod(ctx, id);
  if (!method.customer) throw invalidParam('payment_method', 'The payment method you provided is not attached to a customer so detachment is impossible.', 'payment_method_unexpected_state');
  const detached = { ...method, customer: null };
  ctx.state.paymentMethods.set(id, detached);
  ctx.emit('payment_method.detached', detached);
  return detached;
}

export function customerPaymentMethods(ctx: FakeContext, customerId: string): PaymentMethod[] {
  getCustomer(ctx, customerId, 'customer');
  return [...ctx.state.paymentMethods.values()].filter((method) => method.customer === customerId).sort((a, b) => b.created - a.created);
}

/**
 * A ConfirmationToken as Stripe.js makes one in the buyer's browser (publishable key, `payment_method_data`), or as
 * the test helper makes one on the server (`payment_method: pm_card_…`).
 */
export function createConfirmationToken(ctx: FakeContext, form: FormObject): ConfirmationToken {
  const data = obj(form, 'payment_method_data');
  let details: CardDetails;
  const methodId = str(form, 'payment_method');
  if (methodId) {
    const method = getPaymentMethod(ctx, methodId);
    details = { ...behaviourOf(ctx, method.id), expMonth: method.card?.exp_month ?? 0, expYear: method.card?.exp_year ?? 0 };
  } else if (str(data, 'type')) {
    details = detailsFromData(data, ctx.now());
  } else {
    throw invalidParam('payment_method_data[type]', 'Missing required param: payment_method_data[type].', 'parameter_missing');
  }
  const setupFutureUsage = str(form, 'setup_future_usage');
  const created = unixSeconds(ctx.now());
  const token: ConfirmationToken = {
    id: stripeId('ctoken'),
    object: 'confirmation_token',
    created,
    expires_at: created + 12 * 3600,
    livemode: false,
    payment_intent: null,
    setup_intent: null,
    payment_method_preview: methodPreview(details, obj(data, 'billing_details')),
    return_url: str(form, 'return_url') ?? null,
    setup_future_usage: setupFutureUsage === 'off_session' || setupFutureUsage === 'on_session' ? setupFutureUsage : null,
    use_stripe_sdk: bool(form, 'use_stripe_sdk') ?? true,
  };
  ctx.state.confirmationTokens.set(token.id, token);
  ctx.state.tokenMethod.set(token.id, details);
  return token;
}

export function getConfirmationToken(ctx: FakeContext, id: string, param = 'confirmation_token'): ConfirmationToken {
  const token = ctx.state.confirmationTokens.get(id);
  if (!token) throw missing('confirmationtoken', id, param);
  return token;
}

/** Spends a ConfirmationToken: it makes the PaymentMethod it previewed, once, before it expires. */
export function methodFromToken(ctx: FakeContext, id: string, use: { paymentIntent?: string; setupIntent?: string }): { method: PaymentMethod; token: ConfirmationToken } {
  const token = getConfirmationToken(ctx, id);
  if (ctx.state.usedTokens.has(id)) {
    throw invalidParam('confirmation_token', 'This ConfirmationToken has already been used to confirm a previous PaymentIntent or SetupIntent.', 'confirmation_token_already_used');
  }
  if (token.expires_at < unixSeconds(ctx.now())) throw invalidParam('confirmation_token', 'This ConfirmationToken has expired.', 'confirmation_token_expired');
  ctx.state.usedTokens.add(id);
  const details = ctx.state.tokenMethod.get(id)!;
  const stored = storeMethod(ctx, details, {});
  const method = { ...stored, billing_details: token.payment_method_preview.billing_details };
  ctx.state.paymentMethods.set(method.id, method);
  const spent = { ...token, payment_intent: use.paymentIntent ?? null, setup_intent: use.setupIntent ?? null };
  ctx.state.confirmationTokens.set(id, spent);
  return { method, token: spent };
}
