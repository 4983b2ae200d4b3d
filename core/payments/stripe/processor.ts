import Stripe from 'stripe';
import { CoreError } from '../../errors.js';
import type {
  CardSetup,
  IntentLookup,
  IntentOutcome,
  IntentRequest,
  PayerDetails,
  PaymentMethodInput,
  PaymentProcessor,
  RefundLookup,
  RefundOutcome,
  RefundRequest,
  SavedPaymentMethod,
  SetupOutcome,
} from '../processor.js';

export interface StripeSettings {
  secretKey: string;
  /** Another address for Stripe's API (`http://127.0.0.1:12111`); for testing against a local stand-in only. */
  apiBase?: string | null;
}

/** The stripe client for these settings: Stripe's API, or the address given for testing. */
export function stripeClient(settings: StripeSettings): Stripe {
  const base = settings.apiBase ? new URL(settings.apiBase) : null;
  return new Stripe(settings.secretKey, {
    maxNetworkRetries: 2,
    timeout: 30_000,
    appInfo: { name: 'Till' },
    ...(base ? { host: base.hostname, port: Number(base.port || (base.protocol === 'http:' ? 80 : 443)), protocol: base.protocol === 'http:' ? 'http' : 'https' } : {}),
  });
}

const tokenIssue = (message: string) =>
  new CoreError('invalid', 'INVALID_CONFIRMATION_TOKEN', message, [{ loc: ['body', 'confirmation_token_id'], msg: message, type: 'value_error' }]);

/** A processor's answer about a Stripe PaymentIntent, in Till's terms (also used for Stripe's webhook events). */
export function outcomeOfPaymentIntent(intent: Stripe.PaymentIntent, requestedMethod: string | null = null): IntentOutcome {
  const savedMethodId = requestedMethod?.startsWith('pm_') ? null : typeof intent.payment_method === 'string' ? intent.payment_method : (intent.payment_method?.id ?? null);
  switch (intent.status) {
    case 'succeeded':
      return { status: 'succeeded', processorIntentId: intent.id, savedMethodId };
    case 'processing':
      return { status: 'processing', processorIntentId: intent.id };
    case 'requires_action': {
      const next = intent.next_action;
      const redirectUrl = next?.redirect_to_url?.url ?? (next?.use_stripe_sdk as { stripe_js?: string } | undefined)?.stripe_js ?? '';
      return { status: 'requires_action', processorIntentId: intent.id, redirectUrl };
    }
    case 'canceled':
      return { status: 'failed', processorIntentId: intent.id, declineCode: 'canceled', message: 'The payment was abandoned before it was completed.' };
    default: {
      // requires_payment_method (declined, authentication failed), requires_confirmation, requires_capture.
      const error = intent.last_payment_error;
      return {
        status: 'failed',
        processorIntentId: intent.id,
        declineCode: error?.decline_code ?? error?.code ?? 'payment_incomplete',
        message: error?.message ?? 'The payment was not completed.',
      };
    }
  }
}

/** A Stripe refund in Till's terms (also used for Stripe's webhook events). */
export function outcomeOfRefund(refund: Stripe.Refund): RefundOutcome {
  switch (refund.status) {
    case 'succeeded':
      return { status: 'succeeded', processorRefundId: refund.id };
    case 'failed':
    case 'canceled':
      return { status: 'failed', processorRefundId: refund.id, message: refund.failure_reason ? `The refund failed: ${refund.failure_reason}` : `The refund was ${refund.status}.` };
    default:
      return { status: 'pending', processorRefundId: refund.id };
  }
}

const isStripeError = (error: unknown): error is Stripe.errors.StripeError => error instanceof Stripe.errors.StripeError;

/**
 * Stripe behind Till's processor interface. Card data never reaches tilld: the hosted checkout's Payment Element
 * gives a ConfirmationToken (`ctoken_…`), which the first charge confirms; the card is saved on the customer at
 * Stripe (`setup_future_usage: off_session`) and renewals charge it off-session. Idempotency keys are Till's, so a
 * retry or the settle job's replay never charges twice; each intent carries `metadata.till_payment_id`, by which
 * Stripe's events and a lost answer are found again.
 */
export function createStripeProcessor(settings: StripeSettings): PaymentProcessor {
  const stripe = stripeClient(settings);

  async function customerFor(payer: PayerDetails | undefined, key: string): Promise<string | null> {
    if (payer?.processorCustomerId) return payer.processorCustomerId;
    if (!payer) return null;
    const customer = await stripe.customers.create({ email: payer.email, ...(payer.name ? { name: payer.name } : {}) }, { idempotencyKey: `till_customer_${key}` });
    return customer.id;
  }

  async function intentFailure(error: unknown): Promise<IntentOutcome> {
    if (!isStripeError(error)) throw error;
    const intent = (error.raw as { payment_intent?: Stripe.PaymentIntent } | undefined)?.payment_intent ?? (error as Stripe.errors.StripeCardError).payment_intent;
    if (error.type === 'StripeCardError') {
      return { status: 'failed', processorIntentId: intent?.id ?? null, declineCode: error.decline_code ?? error.code ?? 'card_declined', message: error.message };
    }
    // A token already used or expired, a method Stripe refuses: the request cannot succeed as it is.
    if (error.type === 'StripeInvalidRequestError' && error.statusCode !== undefined && error.statusCode < 500 && error.statusCode !== 404) {
      return { status: 'failed', processorIntentId: intent?.id ?? null, declineCode: error.code ?? 'invalid_request', message: error.message };
    }
    throw error;
  }

  /** A SetupIntent in Till's terms; a saved card's brand, last four and expiry are read from its PaymentMethod. */
  async function cardSetupOf(setup: Stripe.SetupIntent): Promise<CardSetup> {
    const processorCustomerId = typeof setup.customer === 'string' ? setup.customer : (setup.customer?.id ?? null);
    const customerId = setup.metadata?.customer_id ?? null;
    if (setup.status === 'succeeded' && setup.payment_method) {
      const method = typeof setup.payment_method === 'string' ? await stripe.paymentMethods.retrieve(setup.payment_method) : setup.payment_method;
      return {
        status: 'succeeded',
        setupId: setup.id,
        customerId,
        method: {
          processorMethodId: method.id,
          processorCustomerId,
          brand: method.card?.brand ?? method.type,
          last4: method.card?.last4 ?? method.sepa_debit?.last4 ?? '',
          expMonth: method.card?.exp_month ?? null,
          expYear: method.card?.exp_year ?? null,
        },
      };
    }
    if (setup.status === 'requires_action') {
      const next = setup.next_action;
      const redirectUrl = next?.redirect_to_url?.url ?? (next?.use_stripe_sdk as { stripe_js?: string } | undefined)?.stripe_js ?? null;
      return { status: 'requires_action', setupId: setup.id, customerId, clientSecret: setup.client_secret ?? '', redirectUrl };
    }
    const error = setup.last_setup_error;
    return {
      status: 'failed',
      setupId: setup.id,
      customerId,
      declineCode: error?.decline_code ?? error?.code ?? (setup.status === 'canceled' ? 'canceled' : 'setup_incomplete'),
      message: error?.message ?? 'The card was not saved.',
    };
  }

  return {
    name: 'stripe',

    async setupPaymentMethod(input: PaymentMethodInput, payer?: PayerDetails): Promise<SavedPaymentMethod> {
      if (input.kind === 'card') {
        const msg = 'Card numbers are collected by Stripe on the checkout page; send the confirmation_token_id Stripe.js made instead';
        throw new CoreError('invalid', 'CARD_DATA_NOT_ACCEPTED', msg, [{ loc: ['body', 'confirmation_token_id'], msg, type: 'value_error' }]);
      }
      const token = input.token.trim();
      try {
        if (token.startsWith('ctoken_')) {
          const confirmation = await stripe.confirmationTokens.retrieve(token);
          if (confirmation.payment_intent || confirmation.setup_intent) throw tokenIssue('This confirmation token was already used; make a new one with Stripe.js');
          if (confirmation.expires_at !== null && confirmation.expires_at * 1000 < Date.now()) throw tokenIssue('This confirmation token has expired; make a new one with Stripe.js');
          const preview = confirmation.payment_method_preview;
          const card = preview?.card;
          return {
            processorMethodId: confirmation.id,
            processorCustomerId: await customerFor(payer, confirmation.id),
            brand: card?.brand ?? preview?.type ?? 'unknown',
            last4: card?.last4 ?? (preview?.sepa_debit?.last4 ?? ''),
            expMonth: card?.exp_month ?? null,
            expYear: card?.exp_year ?? null,
          };
        }
        if (token.startsWith('pm_')) {
          const method = await stripe.paymentMethods.retrieve(token);
          const customerId = typeof method.customer === 'string' ? method.customer : (method.customer?.id ?? null);
          return {
            processorMethodId: method.id,
            processorCustomerId: customerId ?? (await customerFor(payer, method.id)),
            brand: method.card?.brand ?? method.type,
            last4: method.card?.last4 ?? method.sepa_debit?.last4 ?? '',
            expMonth: method.card?.exp_month ?? null,
            expYear: method.card?.exp_year ?? null,
          };
        }
      } catch (error) {
        if (isStripeError(error) && error.statusCode === 404) throw tokenIssue(`Stripe does not know ${token}; make a new confirmation token with Stripe.js`);
        throw error;
      }
      throw tokenIssue('Expected a Stripe ConfirmationToken (ctoken_…) or PaymentMethod (pm_…) id');
    },

    async saveForLater(method: SavedPaymentMethod, request: { idempotencyKey: string; description: string }): Promise<SetupOutcome> {
      if (!method.processorMethodId.startsWith('ctoken_')) return { status: 'succeeded', method };
      // Stripe's way to save a card without charging it: a SetupIntent for off-session use, confirmed with the
      // ConfirmationToken, which attaches the PaymentMethod to the customer (and runs any check the bank wants now).
      let setup: Stripe.SetupIntent;
      try {
        setup = await stripe.setupIntents.create(
          {
            confirm: true,
            confirmation_token: method.processorMethodId,
            usage: 'off_session',
            description: request.description,
            ...(method.processorCustomerId ? { customer: method.processorCustomerId } : {}),
          },
          { idempotencyKey: request.idempotencyKey },
        );
      } catch (error) {
        if (!isStripeError(error)) throw error;
        if (error.type === 'StripeCardError' || (error.type === 'StripeInvalidRequestError' && error.statusCode !== undefined && error.statusCode < 500 && error.statusCode !== 404)) {
          return { status: 'failed', declineCode: error.decline_code ?? error.code ?? 'card_declined', message: error.message };
        }
        throw error;
      }
      const methodId = typeof setup.payment_method === 'string' ? setup.payment_method : (setup.payment_method?.id ?? null);
      if (setup.status === 'succeeded' && methodId) return { status: 'succeeded', method: { ...method, processorMethodId: methodId } };
      if (setup.status === 'requires_action') {
        // Nothing waits for a bank's page at a checkout that charges nothing yet: let it go rather than keep a card
        // that is not ready for the renewals.
        await stripe.setupIntents.cancel(setup.id, { cancellation_reason: 'abandoned' }).catch(() => undefined);
        return { status: 'failed', declineCode: 'authentication_required', message: 'Your bank asks to authenticate this card before it can be saved, which this checkout cannot do yet. Use another card.' };
      }
      const error = setup.last_setup_error;
      return { status: 'failed', declineCode: error?.decline_code ?? error?.code ?? 'setup_failed', message: error?.message ?? 'The card could not be saved.' };
    },

    async setupCard(input: PaymentMethodInput, payer: PayerDetails, request): Promise<CardSetup> {
      // Checks the token (Stripe.js's ConfirmationToken, or a PaymentMethod) as a checkout does, and finds or makes
      // the payer's Stripe customer, which the SetupIntent attaches the card to.
      const method = await this.setupPaymentMethod(input, payer);
      const customer = method.processorCustomerId;
      const byToken = method.processorMethodId.startsWith('ctoken_');
      let setup: Stripe.SetupIntent;
      try {
        setup = await stripe.setupIntents.create(
          {
            confirm: true,
            usage: 'off_session',
            return_url: request.returnUrl,
            metadata: { organization_id: request.organizationId, customer_id: request.customerId },
            ...(byToken ? { confirmation_token: method.processorMethodId } : { payment_method: method.processorMethodId }),
            ...(customer ? { customer } : {}),
          },
          { idempotencyKey: `till_setup_${request.idempotencyKey}` },
        );
      } catch (error) {
        if (!isStripeError(error)) throw error;
        if (error.type === 'StripeCardError' || (error.type === 'StripeInvalidRequestError' && error.statusCode !== undefined && error.statusCode < 500 && error.statusCode !== 404)) {
          const failed = (error.raw as { setup_intent?: Stripe.SetupIntent } | undefined)?.setup_intent;
          return { status: 'failed', setupId: failed?.id ?? null, customerId: request.customerId, declineCode: error.decline_code ?? error.code ?? 'card_declined', message: error.message };
        }
        throw error;
      }
      return cardSetupOf(setup);
    },

    async retrieveSetup(setupId: string): Promise<CardSetup | undefined> {
      if (!setupId.startsWith('seti_')) return undefined;
      try {
        return await cardSetupOf(await stripe.setupIntents.retrieve(setupId));
      } catch (error) {
        if (isStripeError(error) && error.statusCode === 404) return undefined;
        throw error;
      }
    },

    async detachMethod(method: { processorMethodId: string }): Promise<void> {
      if (!method.processorMethodId.startsWith('pm_')) return;
      try {
        await stripe.paymentMethods.detach(method.processorMethodId);
      } catch (error) {
        // Already detached (or never attached): what was asked for is so.
        if (isStripeError(error) && error.statusCode !== undefined && error.statusCode < 500) return;
        throw error;
      }
    },

    async createIntent(request: IntentRequest): Promise<IntentOutcome> {
      const fromToken = request.processorMethodId.startsWith('ctoken_');
      const params: Stripe.PaymentIntentCreateParams = {
        amount: request.amount,
        currency: request.currency,
        description: request.description,
        metadata: { till_payment_id: request.paymentId },
        confirm: true,
        ...(request.processorCustomerId ? { customer: request.processorCustomerId } : {}),
        ...(fromToken ? { confirmation_token: request.processorMethodId } : { payment_method: request.processorMethodId }),
        ...(request.offSession
          ? { off_session: true }
          : {
              ...(request.returnUrl ? { return_url: request.returnUrl } : {}),
              // The first charge saves the card at Stripe, authenticated for the renewals to come.
              ...(fromToken && request.processorCustomerId ? { setup_future_usage: 'off_session' as const } : {}),
            }),
      };
      try {
        const intent = await stripe.paymentIntents.create(params, { idempotencyKey: request.idempotencyKey });
        return outcomeOfPaymentIntent(intent, request.processorMethodId);
      } catch (error) {
        return intentFailure(error);
      }
    },

    async retrieveIntent(ref): Promise<IntentLookup> {
      if (ref.processorIntentId) return outcomeOfPaymentIntent(await stripe.paymentIntents.retrieve(ref.processorIntentId));
      // The answer never came: Stripe finds the intent by the id Till gave it (search lags a few seconds behind,
      // and the settle job asks a minute later; a replay with the same key is harmless for 24 hours anyway).
      const found = await stripe.paymentIntents.search({ query: `metadata['till_payment_id']:'${ref.paymentId}'`, limit: 1 });
      return found.data[0] ? outcomeOfPaymentIntent(found.data[0]) : { status: 'not_found' };
    },

    async cancelIntent(ref): Promise<IntentOutcome> {
      try {
        return outcomeOfPaymentIntent(await stripe.paymentIntents.cancel(ref.processorIntentId, { cancellation_reason: 'abandoned' }));
      } catch (error) {
        // Already succeeded, processing or canceled meanwhile: its state is the answer.
        if (isStripeError(error) && error.code === 'payment_intent_unexpected_state') return outcomeOfPaymentIntent(await stripe.paymentIntents.retrieve(ref.processorIntentId));
        throw error;
      }
    },

    async refund(request: RefundRequest): Promise<RefundOutcome> {
      try {
        const refund = await stripe.refunds.create(
          { payment_intent: request.processorIntentId, amount: request.amount, metadata: { till_refund_id: request.refundId } },
          { idempotencyKey: `till_refund_${request.idempotencyKey}` },
        );
        return outcomeOfRefund(refund);
      } catch (error) {
        if (isStripeError(error) && error.type === 'StripeInvalidRequestError' && error.statusCode !== undefined && error.statusCode < 500) {
          return { status: 'failed', processorRefundId: null, message: error.message };
        }
        throw error;
      }
    },

    async retrieveRefund(ref): Promise<RefundLookup> {
      if (ref.processorRefundId) return outcomeOfRefund(await stripe.refunds.retrieve(ref.processorRefundId));
      // Refunds cannot be searched; the create's idempotency key answers the refund it made (24 hours).
      return { status: 'not_found' };
    },
  };
}
