import type { TestMethod } from './catalogue.js';
import type { FakeContext } from './context.js';
import { StripeFakeError, invalidParam, missing, unexpectedState } from './errors.js';
import { bool, metadataOf, str, type FormObject } from './form.js';
import { stripeId, unixSeconds } from './ids.js';
import { attachPaymentMethod, behaviourOf, getCustomer, getPaymentMethod, methodFromToken } from './methods.js';
import type { Charge, Dispute, NextAction, PaymentError, PaymentIntent, PaymentMethod, SetupIntent } from './state.js';

const DOCS = 'https://docs.stripe.com/error-codes';

function positiveAmount(form: FormObject): number {
  const raw = str(form, 'amount');
  if (raw === undefined) throw invalidParam('amount', 'Missing required param: amount.', 'parameter_missing');
  const amount = Number(raw);
  if (!/^\d+$/.test(raw) || amount < 1) throw invalidParam('amount', 'Invalid integer: ' + raw, 'parameter_invalid_integer');
  return amount;
}

function currencyOf(form: FormObject): string {
  const currency = str(form, 'currency');
  if (!currency) throw invalidParam('currency', 'Missing required param: currency.', 'parameter_missing');
  if (!/^[a-zA-Z]{3}$/.test(currency)) throw invalidParam('currency', `Invalid currency: ${currency}.`, 'parameter_invalid_string');
  return currency.toLowerCase();
}

const futureUsage = (value: string | undefined) => (value === 'off_session' || value === 'on_session' ? value : null);

export function getPaymentIntent(ctx: FakeContext, id: string): PaymentIntent {
  const intent = ctx.state.paymentIntents.get(id);
  if (!intent) throw missing('payment_intent', id, 'intent');
  return intent;
}

export function createPaymentIntent(ctx: FakeContext, form: FormObject): PaymentIntent {
  const amount = positiveAmount(form);
  const currency = currencyOf(form);
  const customerId = str(form, 'customer');
  if (customerId) getCustomer(ctx, customerId, 'customer');
  if (bool(form, 'off_session') && bool(form, 'confirm') !== true) {
    throw invalidParam('off_session', 'You passed `off_session` but did not pass `confirm=true`. `off_session` can only be used when confirming.');
  }
  const id = stripeId('pi');
  const intent: PaymentIntent = {
    id,
    object: 'payment_intent',
    amount,
    amount_capturable: 0,
    amount_received: 0,
    currency,
    customer: customerId ?? null,
    description: str(form, 'description') ?? null,
    status: 'requires_payment_method',
    client_secret: `${id}_secret_${stripeId('s').slice(2)}`,
    capture_method: 'automatic_async',
    confirmation_method: 'automatic',
    created: unixSeconds(ctx.now()),
    canceled_at: null,
    cancellation_reason: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: metadataOf(form),
    next_action: null,
    payment_method: null,
    payment_method_types: ['card', 'sepa_debit'],
    receipt_email: str(form, 'receipt_email') ?? null,
    setup_future_usage: futureUsage(str(form, 'setup_future_usage')),
    statement_descriptor: null,
  };
  const methodId = str(form, 'payment_method');
  if (methodId) {
    const method = getPaymentMethod(ctx, methodId);
    intent.payment_method = method.id;
    intent.status = 'requires_confirmation';
  }
  ctx.state.paymentIntents.set(id, intent);
  ctx.emit('payment_intent.created', intent);
  if (bool(form, 'confirm')) return confirmPaymentIntent(ctx, id, form);
  return intent;
}

export function updatePaymentIntent(ctx: FakeContext, id: string, form: FormObject): PaymentIntent {
  const intent = getPaymentIntent(ctx, id);
  if (intent.status === 'succeeded' || intent.status === 'processing' || intent.status === 'canceled') {
    throw unexpectedState('payment_intent_unexpected_state', `This PaymentIntent's amount could not be updated because it has a status of ${intent.status}.`);
  }
  const updated: PaymentIntent = {
    ...intent,
    amount: str(form, 'amount') !== undefined ? positiveAmount(form) : intent.amount,
    description: str(form, 'description') ?? intent.description,
    metadata: metadataOf(form, intent.metadata),
  };
  ctx.state.paymentIntents.set(id, updated);
  return updated;
}

function failure(decline: { code: string; declineCode: string; message: string }, method: PaymentMethod): PaymentError {
  return { type: 'card_error', code: decline.code, decline_code: decline.declineCode, message: decline.message, payment_method: method, doc_url: `${DOCS}#${decline.code}` };
}

const AUTHENTICATION_REQUIRED = {
  code: 'authentication_required',
  declineCode: 'authentication_required',
  message: 'Your card was declined. This transaction requires authentication.',
};

/** Whether a charge by `method` needs the customer to authenticate (3-D Secure) this time. */
function needsAuthentication(ctx: FakeContext, behaviour: TestMethod, methodId: string): boolean {
  switch (behaviour.behaviour) {
    case 'always_authenticate':
    case 'authenticate_on_session':
      return true;
    case 'authenticate_on_setup':
      return !ctx.state.readyOffSession.has(methodId);
    default:
      return false;
  }
}

function makeCharge(ctx: FakeContext, intent: PaymentIntent, method: PaymentMethod, status: Charge['status'], error?: PaymentError): Charge {
  const charge: Charge = {
    id: stripeId('ch'),
    object: 'charge',
    amount: intent.amount,
    amount_captured: status === 'succeeded' ? intent.amount : 0,
    amount_refunded: 0,
    captured: status === 'succeeded',
    created: unixSeconds(ctx.now()),
    currency: intent.currency,
    customer: intent.customer,
    description: intent.description,
    disputed: false,
    failure_code: error?.code ?? null,
    failure_message: error?.message ?? null,
    livemode: false,
    metadata: intent.metadata,
    outcome: {
      network_status: status === 'failed' ? 'declined_by_network' : 'approved_by_network',
      reason: error?.decline_code ?? null,
      risk_level: 'normal',
      seller_message: status === 'failed' ? 'The bank did not return any further details with this decline.' : 'Payment complete.',
      type: status === 'failed' ? 'issuer_declined' : 'authorized',
    },
    paid: status === 'succeeded',
    payment_intent: intent.id,
    payment_method: method.id,
    payment_method_details: method.card
      ? { type: 'card', card: { brand: method.card.brand, last4: method.card.last4, exp_month: method.card.exp_month, exp_year: method.card.exp_year, country: method.card.country, funding: method.card.funding } }
      : { type: method.type },
    refunded: false,
    status,
  };
  ctx.state.charges.set(charge.id, charge);
  return charge;
}

function save(ctx: FakeContext, intent: PaymentIntent): PaymentIntent {
  ctx.state.paymentIntents.set(intent.id, intent);
  return intent;
}

/** The intent fails with `error`: Stripe answers 402 carrying the intent, and the intent waits for a new method. */
function fail(ctx: FakeContext, intent: PaymentIntent, method: PaymentMethod, error: PaymentError): never {
  const charge = makeCharge(ctx, intent, method, 'failed', error);
  const failed = save(ctx, { ...intent, status: 'requires_payment_method', last_payment_error: error, latest_charge: charge.id, next_action: null });
  ctx.emit('charge.failed', charge);
  ctx.emit('payment_intent.payment_failed', failed);
  throw paymentError(failed, error);
}

function paymentError(intent: PaymentIntent, error: PaymentError): StripeFakeError {
  return new StripeFakeError(402, { ...error, charge: intent.latest_charge, payment_intent: intent }, true);
}

/** Captures the payment; a method set up for future use is attached to the customer. */
function succeed(ctx: FakeContext, intent: PaymentIntent, method: PaymentMethod): PaymentIntent {
  const charge = makeCharge(ctx, intent, method, 'succeeded');
  const done = save(ctx, { ...intent, status: 'succeeded', amount_received: intent.amount, latest_charge: charge.id, next_action: null, last_payment_error: null });
  // Saved on the customer only once the payment went through, as Stripe does with setup_future_usage.
  if (intent.setup_future_usage && intent.customer && !method.customer) attachPaymentMethod(ctx, method.id, intent.customer);
  if (intent.setup_future_usage === 'off_session') ctx.state.readyOffSession.add(method.id);
  ctx.emit('charge.succeeded', charge);
  ctx.emit('payment_intent.succeeded', done);
  if (behaviourOf(ctx, method.id).behaviour === 'disputed') openDispute(ctx, done, charge);
  return done;
}

function openDispute(ctx: FakeContext, intent: PaymentIntent, charge: Charge): void {
  const created = unixSeconds(ctx.now());
  const dispute: Dispute = {
    id: stripeId('dp'),
    object: 'dispute',
    amount: charge.amount,
    charge: charge.id,
    created,
    currency: charge.currency,
    evidence: { uncategorized_text: null, customer_email_address: null, product_description: null },
    evidence_details: { due_by: created + 7 * 86400, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: intent.id,
    reason: 'fraudulent',
    status: 'needs_response',
  };
  ctx.state.disputes.set(dispute.id, dispute);
  ctx.state.charges.set(charge.id, { ...charge, disputed: true });
  ctx.emit('charge.dispute.created', dispute);
  ctx.emit('charge.dispute.funds_withdrawn', dispute);
}

function redirectFor(ctx: FakeContext, intent: PaymentIntent, returnUrl: string | undefined): NextAction {
  const url = `${ctx.baseUrl}/_fake/3ds/${intent.id}`;
  if (returnUrl) return { type: 'redirect_to_url', redirect_to_url: { url: `${url}?return_url=${encodeURIComponent(returnUrl)}`, return_url: returnUrl } };
  return { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: url } };
}

/**
 * Confirms an intent with its method (or a new one, or a ConfirmationToken): succeeds, declines (402), asks for 3-D
 * Secure, or starts `processing`, as the method's test behaviour says.
 */
export function confirmPaymentIntent(ctx: FakeContext, id: string, form: FormObject): PaymentIntent {
  let intent = getPaymentIntent(ctx, id);
  if (intent.status !== 'requires_payment_method' && intent.status !== 'requires_confirmation' && intent.status !== 'requires_action') {
    throw unexpectedState('payment_intent_unexpected_state', `This PaymentIntent's status is ${intent.status}, so it cannot be confirmed.`);
  }
  const tokenId = str(form, 'confirmation_token');
  let method: PaymentMethod;
  let returnUrl = str(form, 'return_url');
  if (tokenId) {
    const spent = methodFromToken(ctx, tokenId, { paymentIntent: id });
    method = spent.method;
    returnUrl ??= spent.token.return_url ?? undefined;
    if (spent.token.setup_future_usage && !intent.setup_future_usage) intent = { ...intent, setup_future_usage: spent.token.setup_future_usage };
  } else {
    const methodId = str(form, 'payment_method') ?? intent.payment_method;
    if (!methodId) throw invalidParam('payment_method', 'You cannot confirm this PaymentIntent because it\'s missing a payment method.', 'payment_intent_unexpected_state');
    method = getPaymentMethod(ctx, methodId);
  }
  const sfu = futureUsage(str(form, 'setup_future_usage'));
  if (sfu) intent = { ...intent, setup_future_usage: sfu };
  if (method.customer && intent.customer && method.customer !== intent.customer) {
    throw invalidParam('payment_method', 'The provided PaymentMethod belongs to another Customer.', 'payment_method_unexpected_state');
  }
  intent = save(ctx, { ...intent, payment_method: method.id, last_payment_error: null });
  const offSession = bool(form, 'off_session') === true;
  const behaviour = behaviourOf(ctx, method.id);

  if (behaviour.decline && (behaviour.behaviour === 'declines' || behaviour.behaviour === 'declines_after_attach')) {
    fail(ctx, intent, method, failure(behaviour.decline, method));
  }
  if (needsAuthentication(ctx, behaviour, method.id)) {
    if (offSession) fail(ctx, intent, method, failure(AUTHENTICATION_REQUIRED, method));
    const waiting = save(ctx, { ...intent, status: 'requires_action', next_action: redirectFor(ctx, intent, returnUrl) });
    ctx.emit('payment_intent.requires_action', waiting);
    return waiting;
  }
  if (behaviour.behaviour === 'processing_succeeds' || behaviour.behaviour === 'processing_fails') {
    const charge = makeCharge(ctx, intent, method, 'pending');
    const processing = save(ctx, { ...intent, status: 'processing', latest_charge: charge.id });
    ctx.emit('charge.pending', charge);
    ctx.emit('payment_intent.processing', processing);
    ctx.later(() => settleProcessing(ctx, processing.id));
    return processing;
  }
  return succeed(ctx, intent, method);
}

function settleProcessing(ctx: FakeContext, id: string): void {
  const intent = getPaymentIntent(ctx, id);
  if (intent.status !== 'processing' || !intent.payment_method || !intent.latest_charge) return;
  const method = getPaymentMethod(ctx, intent.payment_method);
  const behaviour = behaviourOf(ctx, method.id);
  const charge = ctx.state.charges.get(intent.latest_charge)!;
  if (behaviour.behaviour === 'processing_fails' && behaviour.decline) {
    const error = failure(behaviour.decline, method);
    const failedCharge: Charge = { ...charge, status: 'failed', failure_code: error.code, failure_message: error.message };
    ctx.state.charges.set(charge.id, failedCharge);
    const failed = save(ctx, { ...intent, status: 'requires_payment_method', last_payment_error: error });
    ctx.emit('charge.failed', failedCharge);
    ctx.emit('payment_intent.payment_failed', failed);
    return;
  }
  const paid: Charge = { ...charge, status: 'succeeded', paid: true, captured: true, amount_captured: charge.amount };
  ctx.state.charges.set(charge.id, paid);
  const done = save(ctx, { ...intent, status: 'succeeded', amount_received: intent.amount });
  ctx.emit('charge.succeeded', paid);
  ctx.emit('payment_intent.succeeded', done);
}

/** The customer on the 3-D Secure page: completing captures the payment, failing leaves it waiting for a method. */
export function authenticate(ctx: FakeContext, id: string, outcome: 'complete' | 'fail'): PaymentIntent | SetupIntent {
  if (id.startsWith('seti_')) return authenticateSetup(ctx, id, outcome);
  const intent = getPaymentIntent(ctx, id);
  if (intent.status !== 'requires_action' || !intent.payment_method) {
    throw unexpectedState('payment_intent_unexpected_state', `This PaymentIntent's status is ${intent.status}; there is nothing to authenticate.`);
  }
  const method = getPaymentMethod(ctx, intent.payment_method);
  if (outcome === 'complete') return succeed(ctx, intent, method);
  const error: PaymentError = {
    type: 'invalid_request_error',
    code: 'payment_intent_authentication_failure',
    message: 'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
    payment_method: method,
    doc_url: `${DOCS}#payment_intent_authentication_failure`,
  };
  const failed = save(ctx, { ...intent, status: 'requires_payment_method', last_payment_error: error, next_action: null });
  ctx.emit('payment_intent.payment_failed', failed);
  return failed;
}

export function cancelPaymentIntent(ctx: FakeContext, id: string, form: FormObject): PaymentIntent {
  const intent = getPaymentIntent(ctx, id);
  if (intent.status === 'succeeded' || intent.status === 'processing' || intent.status === 'canceled') {
    throw unexpectedState('payment_intent_unexpected_state', `You cannot cancel this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be canceled: requires_payment_method, requires_capture, requires_confirmation, requires_action.`);
  }
  const canceled = save(ctx, {
    ...intent,
    status: 'canceled',
    canceled_at: unixSeconds(ctx.now()),
    cancellation_reason: str(form, 'cancellation_reason') ?? 'requested_by_customer',
    next_action: null,
  });
  ctx.emit('payment_intent.canceled', canceled);
  return canceled;
}

export function getSetupIntent(ctx: FakeContext, id: string): SetupIntent {
  const intent = ctx.state.setupIntents.get(id);
  if (!intent) throw missing('setup_intent', id, 'intent');
  return intent;
}

export function createSetupIntent(ctx: FakeContext, form: FormObject): SetupIntent {
  const customerId = str(form, 'customer');
  if (customerId) getCustomer(ctx, customerId, 'customer');
  const id = stripeId('seti');
  const usage = str(form, 'usage') === 'on_session' ? 'on_session' : 'off_session';
  const intent: SetupIntent = {
    id,
    object: 'setup_intent',
    cancellation_reason: null,
    client_secret: `${id}_secret_${stripeId('s').slice(2)}`,
    created: unixSeconds(ctx.now()),
    customer: customerId ?? null,
    description: str(form, 'description') ?? null,
    last_setup_error: null,
    livemode: false,
    metadata: metadataOf(form),
    next_action: null,
    payment_method: null,
    payment_method_types: ['card', 'sepa_debit'],
    status: 'requires_payment_method',
    usage,
  };
  const methodId = str(form, 'payment_method');
  if (methodId) {
    intent.payment_method = getPaymentMethod(ctx, methodId).id;
    intent.status = 'requires_confirmation';
  }
  ctx.state.setupIntents.set(id, intent);
  ctx.emit('setup_intent.created', intent);
  if (bool(form, 'confirm')) return confirmSetupIntent(ctx, id, form);
  return intent;
}

/** Saves a method for later: cards that decline are refused, cards needing 3-D Secure ask for it once. */
export function confirmSetupIntent(ctx: FakeContext, id: string, form: FormObject): SetupIntent {
  let intent = getSetupIntent(ctx, id);
  if (intent.status !== 'requires_payment_method' && intent.status !== 'requires_confirmation' && intent.status !== 'requires_action') {
    throw unexpectedState('setup_intent_unexpected_state', `This SetupIntent's status is ${intent.status}, so it cannot be confirmed.`);
  }
  const tokenId = str(form, 'confirmation_token');
  let method: PaymentMethod;
  let returnUrl = str(form, 'return_url');
  if (tokenId) {
    const spent = methodFromToken(ctx, tokenId, { setupIntent: id });
    method = spent.method;
    returnUrl ??= spent.token.return_url ?? undefined;
  } else {
    const methodId = str(form, 'payment_method') ?? intent.payment_method;
    if (!methodId) throw invalidParam('payment_method', 'You cannot confirm this SetupIntent because it\'s missing a payment method.', 'setup_intent_unexpected_state');
    method = getPaymentMethod(ctx, methodId);
  }
  const behaviour = behaviourOf(ctx, method.id);
  intent = { ...intent, payment_method: method.id, last_setup_error: null };
  if (behaviour.behaviour === 'declines' && behaviour.decline) {
    const error = failure(behaviour.decline, method);
    const failed = { ...intent, status: 'requires_payment_method' as const, last_setup_error: error };
    ctx.state.setupIntents.set(id, failed);
    ctx.emit('setup_intent.setup_failed', failed);
    throw new StripeFakeError(402, { ...error, setup_intent: failed }, true);
  }
  if (behaviour.behaviour === 'always_authenticate' || behaviour.behaviour === 'authenticate_on_session' || behaviour.behaviour === 'authenticate_on_setup') {
    const url = `${ctx.baseUrl}/_fake/3ds/${id}`;
    const next: NextAction = returnUrl
      ? { type: 'redirect_to_url', redirect_to_url: { url: `${url}?return_url=${encodeURIComponent(returnUrl)}`, return_url: returnUrl } }
      : { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: url } };
    const waiting = { ...intent, status: 'requires_action' as const, next_action: next };
    ctx.state.setupIntents.set(id, waiting);
    ctx.emit('setup_intent.requires_action', waiting);
    return waiting;
  }
  return finishSetup(ctx, intent, method);
}

function finishSetup(ctx: FakeContext, intent: SetupIntent, method: PaymentMethod): SetupIntent {
  if (intent.customer && !method.customer) attachPaymentMethod(ctx, method.id, intent.customer);
  if (intent.usage === 'off_session') ctx.state.readyOffSession.add(method.id);
  const done = { ...intent, status: 'succeeded' as const, next_action: null };
  ctx.state.setupIntents.set(intent.id, done);
  ctx.emit('setup_intent.succeeded', done);
  return done;
}

function authenticateSetup(ctx: FakeContext, id: string, outcome: 'complete' | 'fail'): SetupIntent {
  const intent = getSetupIntent(ctx, id);
  if (intent.status !== 'requires_action' || !intent.payment_method) {
    throw unexpectedState('setup_intent_unexpected_state', `This SetupIntent's status is ${intent.status}; there is nothing to authenticate.`);
  }
  const method = getPaymentMethod(ctx, intent.payment_method);
  if (outcome === 'complete') return finishSetup(ctx, intent, method);
  const failed: SetupIntent = {
    ...intent,
    status: 'requires_payment_method',
    next_action: null,
    last_setup_error: { type: 'invalid_request_error', code: 'setup_intent_authentication_failure', message: 'The latest attempt to set up the payment method has failed because authentication failed.', payment_method: method, doc_url: `${DOCS}#setup_intent_authentication_failure` },
  };
  ctx.state.setupIntents.set(id, failed);
  ctx.emit('setup_intent.setup_failed', failed);
  return failed;
}

/** Stripe's cancel: a SetupIntent not yet succeeded (nor processing) is canceled for good. */
export function cancelSetupIntent(ctx: FakeContext, id: string, form: FormObject): SetupIntent {
  const intent = getSetupIntent(ctx, id);
  if (intent.status !== 'requires_payment_method' && intent.status !== 'requires_confirmation' && intent.status !== 'requires_action') {
    throw unexpectedState('setup_intent_unexpected_state', `You cannot cancel this SetupIntent because it has a status of ${intent.status}.`);
  }
  const reason = str(form, 'cancellation_reason');
  const canceled: SetupIntent = {
    ...intent,
    status: 'canceled',
    next_action: null,
    cancellation_reason: reason === 'abandoned' || reason === 'duplicate' ? reason : 'requested_by_customer',
  };
  ctx.state.setupIntents.set(id, canceled);
  ctx.emit('setup_intent.canceled', canceled);
  return canceled;
}
