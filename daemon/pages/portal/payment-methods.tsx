import type { RequestHandler, Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../app.js';
import { addOwnPaymentMethod, confirmOwnPaymentMethod, type AddPaymentMethodDeps, type AddPaymentMethodResult } from '../../../core/billing/customer-sessions/add-payment-method.js';
import { deleteOwnPaymentMethod, listOwnPaymentMethods } from '../../../core/billing/customer-sessions/payment-methods.js';
import type { CustomerPrincipal } from '../../../core/billing/customer-sessions/service.js';
import { customersByIds } from '../../../core/billing/customers/repository.js';
import type { Organization } from '../../../core/billing/organizations/schema.js';
import { CoreError, isCoreError } from '../../../core/errors.js';
import { organizationPaymentMode } from '../../payment-mode.js';
import { allowStripe, sendToAuthenticate } from '../checkout/handlers.js';
import { paymentMethodOf } from '../checkout/form.js';
import type { FieldErrors } from '../forms.js';
import { sendPage } from '../render.js';
import { clockOf, signedIn } from './handlers.js';
import { portalPath } from './session.js';
import { PortalPaymentMethodsPage } from './views/PaymentMethodsPage.js';

const NOTICES: Record<string, string> = {
  'card-added': 'Your card is saved: your subscriptions are charged with it from their next payment on.',
  'card-removed': 'The card is removed.',
};

const addDepsOf = (deps: AppDeps): AddPaymentMethodDeps => ({ db: deps.db, clock: clockOf(deps), payments: deps.payments!, livePayments: deps.stripe?.processor ?? null, liveRequired: deps.liveRequired ?? false });

const pagePath = (organization: Organization) => `${portalPath(organization.slug)}/payment-methods`;

async function sendCards(deps: AppDeps, res: Response, status: number, organization: Organization, principal: CustomerPrincipal, extra: { notice?: string; errors?: { form?: string; fields?: FieldErrors } } = {}) {
  const mode = await organizationPaymentMode(deps, organization.id);
  if (mode === 'stripe_live' || mode === 'stripe_test') allowStripe(res);
  const customer = (await customersByIds(deps.db, [principal.customerId])).get(principal.customerId)!;
  const { items } = await listOwnPaymentMethods(deps.db, principal, { page: 1, limit: 100 });
  const cards = items.map((m, i) => ({ id: m.id, brand: m.brand, last4: m.last4, expMonth: m.expMonth, expYear: m.expYear, isDefault: i === 0 }));
  sendPage(
    res,
    status,
    <PortalPaymentMethodsPage
      seller={organization.name}
      base={portalPath(organization.slug)}
      email={customer.email}
      cards={cards}
      mode={mode}
      publishableKey={deps.stripe?.publishableKey ?? null}
      {...extra}
    />,
  );
}

/** GET /portal/:slug/payment-methods — the saved cards and the form to add one. */
export function showPortalPaymentMethods(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const notice = typeof req.query.notice === 'string' ? NOTICES[req.query.notice] : undefined;
    await sendCards(deps, res, 200, context.organization, context.principal, { notice });
  };
}

/** Where a saved card, a card waiting for 3-D Secure, or a refusal leads. */
function follow(deps: AppDeps, res: Response, organization: Organization, result: AddPaymentMethodResult) {
  if (result.status === 'succeeded') return res.redirect(303, `${pagePath(organization)}?notice=card-added`);
  // The bank's page (the sandbox's, Stripe's) comes back to …/payment-methods/return with the setup's id.
  if (result.redirectUrl) return sendToAuthenticate(deps, res, result.redirectUrl);
  throw new CoreError('bad_request', 'PAYMENT_METHOD_SETUP_FAILED', 'Your bank asks to authenticate this card in a way this page cannot offer. Use another card.');
}

/** A refusal the customer can act on, beside the card inputs or above the form. */
function errorsOf(error: CoreError): { form?: string; fields?: FieldErrors } {
  const details = Array.isArray(error.details) ? (error.details as { loc?: unknown; msg?: unknown }[]) : [];
  for (const detail of details) {
    const last = Array.isArray(detail.loc) ? detail.loc[detail.loc.length - 1] : undefined;
    if ((last === 'confirmation_token_id' || last === 'card_number' || last === 'card_expiry' || last === 'card_cvc') && typeof detail.msg === 'string') {
      return { fields: { [last === 'confirmation_token_id' ? 'confirmation_token_id' : last]: detail.msg } };
    }
  }
  return { form: error.message };
}

/**
 * POST /portal/:slug/payment-methods — saves the card typed (sandbox) or Stripe's ConfirmationToken through the
 * portal API's add-a-card (the processor's setup flow), as the default of the customer's subscriptions.
 */
export function submitPortalPaymentMethod(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const { organization, principal } = context;
    const again = (status: number, errors: { form?: string; fields?: FieldErrors }) => sendCards(deps, res, status, organization, principal, { errors });
    const mode = await organizationPaymentMode(deps, organization.id);
    if (mode === 'not_configured') return again(409, { form: `${organization.name} cannot take cards at the moment.` });
    const sent = paymentMethodOf(req.body, mode === 'sandbox', 'add a card here');
    if (!sent.ok) return again(400, sent.errors);
    const method = sent.method;
    try {
      const result = await addOwnPaymentMethod(addDepsOf(deps), principal, {
        method,
        setDefault: true,
        returnUrl: `${deps.baseUrl.replace(/\/$/, '')}${pagePath(organization)}/return`,
        idempotencyKey: randomUUID(),
      });
      follow(deps, res, organization, result);
    } catch (error) {
      if (!isCoreError(error) || error.kind === 'not_found' || error.kind === 'unauthorized') throw error;
      await again(error.kind === 'invalid' ? 400 : 402, errorsOf(error));
    }
  };
}

/**
 * GET /portal/:slug/payment-methods/return?setup_intent=… — back from the bank's page: the setup, authenticated,
 * is saved (the portal API's confirm); one that failed or still waits says so.
 */
export function showPortalPaymentMethodReturn(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const { organization, principal } = context;
    const setupId = typeof req.query.setup_intent === 'string' ? req.query.setup_intent : '';
    if (!setupId) return res.redirect(303, pagePath(organization));
    try {
      const result = await confirmOwnPaymentMethod(addDepsOf(deps), principal, { setupId, setDefault: true });
      if (result.status === 'succeeded') return res.redirect(303, `${pagePath(organization)}?notice=card-added`);
      await sendCards(deps, res, 409, organization, principal, { errors: { form: 'Your bank has not confirmed the card yet. Try again, or use another card.' } });
    } catch (error) {
      if (!isCoreError(error) || error.kind === 'unauthorized') throw error;
      await sendCards(deps, res, 402, organization, principal, { errors: { form: 'The card was not saved: the authentication was not completed. Nothing was charged; try again or use another card.' } });
    }
  };
}

/** POST /portal/:slug/payment-methods/:id/delete — removes a card, refused for the last one of a running subscription. */
export function deletePortalPaymentMethod(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const { organization, principal } = context;
    try {
      await deleteOwnPaymentMethod(addDepsOf(deps), principal, String(req.params.id));
    } catch (error) {
      if (!isCoreError(error) || error.kind === 'not_found' || error.kind === 'unauthorized') throw error;
      return sendCards(deps, res, 409, organization, principal, { errors: { form: error.message } });
    }
    res.redirect(303, `${pagePath(organization)}?notice=card-removed`);
  };
}
