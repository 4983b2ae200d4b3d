import { z } from 'zod';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { organizationClock } from '../../jobs/clock.js';
import type { CardSetup, PaymentMethodInput, PaymentProcessor } from '../../payments/processor.js';
import { paymentMethodsOf, savePaymentMethod, type PaymentMethod } from '../../payments/repository.js';
import { processorFor, processorForCharge, type ProcessorChoice } from '../../payments/select.js';
import { findCustomers } from '../customers/repository.js';
import type { Customer } from '../customers/schema.js';
import { announceCustomerUpdated } from '../customers/service.js';
import { chargeSubscriptionsWith } from '../subscriptions/repository.js';
import { BILLABLE_STATUSES } from '../subscriptions/schema.js';
import type { CustomerPrincipal } from './service.js';

// The portal's "add a card" (Polar's customerPortal.customers.addPaymentMethod / confirmPaymentMethod): the card is
// saved through the processor's setup flow (a Stripe SetupIntent, the sandbox's equivalent), never charged.

const ReturnUrl = z.url({ protocol: /^https?$/, error: 'Give an http(s) URL.' });

/** Polar's CustomerPaymentMethodCreate. */
export const CustomerPaymentMethodCreate = z.strictObject({
  confirmation_token_id: z.string().trim().min(1).max(255),
  set_default: z.boolean(),
  return_url: ReturnUrl,
});

/** Polar's CustomerPaymentMethodConfirm: after the customer authenticated a setup that required it. */
export const CustomerPaymentMethodConfirm = z.strictObject({
  setup_intent_id: z.string().trim().min(1).max(255),
  set_default: z.boolean(),
});

export interface AddPaymentMethodDeps extends ProcessorChoice {
  db: Database;
  clock: Clock;
}

/** What adding a card answers: saved (the method), or waiting for 3-D Secure (Polar's client_secret; the redirect for pages). */
export type AddPaymentMethodResult =
  | { status: 'succeeded'; method: PaymentMethod; isDefault: boolean }
  | { status: 'requires_action'; clientSecret: string; redirectUrl: string | null; setupId: string };

/** Polar's PaymentMethodSetupFailed (400): the card was declined while being saved. */
const setupFailed = (message: string | null) =>
  new CoreError('bad_request', 'PAYMENT_METHOD_SETUP_FAILED', `Could not add this payment method${message ? `: ${message}` : '.'} Please try again with a different card.`);

const invalidSetup = (input: string) =>
  new CoreError('invalid', 'INVALID_SETUP_INTENT', 'Invalid setup_intent_id.', [{ type: 'invalid', loc: ['body', 'setup_intent_id'], msg: 'Invalid setup_intent_id.', input }]);

async function customerOf(db: Database, principal: CustomerPrincipal): Promise<Customer> {
  const [customer] = await findCustomers(db, { id: principal.customerId }, [principal.organizationId]);
  if (!customer) throw new CoreError('unauthorized', 'INVALID_CUSTOMER_SESSION', 'The customer session token is invalid or expired');
  return customer;
}

/** The processor customer the customer's saved cards at this processor belong to (Stripe `cus_…`), if any. */
async function processorCustomerOf(db: Database, customerId: string, processor: PaymentProcessor): Promise<string | null> {
  return (await paymentMethodsOf(db, customerId)).find((method) => method.processor === processor.name && method.processorCustomerId)?.processorCustomerId ?? null;
}

/**
 * Saves a card the processor set up, once (a confirm repeated answers the card already saved). With `setDefault`
 * the customer's billed subscriptions are charged with it from now on; it is the newest card, so the default of the
 * customer's other charges too. Emits customer.updated and customer.state_changed, as Polar does on a new default.
 */
async function keep(deps: AddPaymentMethodDeps, customer: Customer, processor: PaymentProcessor, setup: Extract<CardSetup, { status: 'succeeded' }>, setDefault: boolean): Promise<AddPaymentMethodResult> {
  const clock = await organizationClock(deps.db, deps.clock, customer.organizationId);
  return deps.db.transaction(async (trx) => {
    const [locked] = await findCustomers(trx, { id: customer.id }, [customer.organizationId], { forUpdate: true });
    if (!locked) throw new CoreError('unauthorized', 'INVALID_CUSTOMER_SESSION', 'The customer session token is invalid or expired');
    const methods = await paymentMethodsOf(trx, customer.id);
    const known = methods.find((method) => method.processor === processor.name && method.processorMethodId === setup.method.processorMethodId);
    const method =
      known ??
      (await savePaymentMethod(trx, {
        organizationId: customer.organizationId,
        customerId: customer.id,
        processor: processor.name,
        processorMethodId: setup.method.processorMethodId,
        processorCustomerId: setup.method.processorCustomerId,
        brand: setup.method.brand,
        last4: setup.method.last4,
        expMonth: setup.method.expMonth,
        expYear: setup.method.expYear,
        createdAt: clock.now(),
      }));
    if (setDefault) await chargeSubscriptionsWith(trx, customer.id, BILLABLE_STATUSES, method.id);
    if (!known) await announceCustomerUpdated(trx, clock, locked);
    const newest = (await paymentMethodsOf(trx, customer.id))[0];
    return { status: 'succeeded', method, isDefault: newest?.id === method.id };
  });
}

function answer(deps: AddPaymentMethodDeps, customer: Customer, processor: PaymentProcessor, setup: CardSetup, setDefault: boolean): Promise<AddPaymentMethodResult> | AddPaymentMethodResult {
  switch (setup.status) {
    case 'succeeded':
      return keep(deps, customer, processor, setup, setDefault);
    case 'requires_action':
      return { status: 'requires_action', clientSecret: setup.clientSecret, redirectUrl: setup.redirectUrl, setupId: setup.setupId };
    case 'failed':
      throw setupFailed(setup.message);
  }
}

/**
 * POST /v1/customer-portal/customers/me/payment-methods: sets a card up for off-session charges with the
 * processor of the customer's organization (Stripe: a SetupIntent confirmed with the ConfirmationToken; the sandbox:
 * its test cards and tokens). A card that wants 3-D Secure answers `requires_action`: the customer authenticates,
 * then confirmPaymentMethod saves it. A declined card is a 400 and saves nothing.
 */
export async function addOwnPaymentMethod(
  deps: AddPaymentMethodDeps,
  principal: CustomerPrincipal,
  input: { method: PaymentMethodInput; setDefault: boolean; returnUrl: string; idempotencyKey: string },
): Promise<AddPaymentMethodResult> {
  const customer = await customerOf(deps.db, principal);
  const processor = await processorForCharge(deps.db, deps, customer.organizationId);
  const payer = { email: customer.email, name: customer.name, processorCustomerId: await processorCustomerOf(deps.db, customer.id, processor) };
  const setup = await processor.setupCard(input.method, payer, { idempotencyKey: input.idempotencyKey, returnUrl: input.returnUrl, organizationId: customer.organizationId, customerId: customer.id });
  return answer(deps, customer, processor, setup, input.setDefault);
}

/**
 * POST /v1/customer-portal/customers/me/payment-methods/confirm: the setup the customer authenticated, saved. A
 * setup of another customer (or unknown, or failed) is Polar's 422 on setup_intent_id; one still waiting answers
 * `requires_action` again.
 */
export async function confirmOwnPaymentMethod(deps: AddPaymentMethodDeps, principal: CustomerPrincipal, input: { setupId: string; setDefault: boolean }): Promise<AddPaymentMethodResult> {
  const customer = await customerOf(deps.db, principal);
  const processor = await processorFor(deps.db, deps, customer.organizationId);
  const setup = await processor.retrieveSetup(input.setupId);
  if (!setup) throw invalidSetup(input.setupId);
  if (setup.customerId !== customer.id || setup.status === 'failed') throw invalidSetup(input.setupId);
  return answer(deps, customer, processor, setup, input.setDefault);
}
