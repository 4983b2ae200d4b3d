import type { Request, RequestHandler, Response } from 'express';
import type { AppDeps } from '../../app.js';
import { openPayLink, openPayLinkRefreshed, payWithLink, returnToPayLink, type PayLinkDeps, type PayLinkView } from '../../../core/billing/pay-links/service.js';
import { payReturnPath } from '../../../core/billing/pay-links/return-url.js';
import { systemClock } from '../../../core/clock.js';
import { CoreError, isCoreError } from '../../../core/errors.js';
import type { Payment } from '../../../core/payments/repository.js';
import { organizationPaymentMode, type PaymentModeName } from '../../payment-mode.js';
import { allowStripe, sendToAuthenticate } from '../checkout/handlers.js';
import { paymentMethodOf } from '../checkout/form.js';
import type { FieldErrors } from '../forms.js';
import { sendPage } from '../render.js';
import { PaidPage, PayLinkClosedPage, PayLinkNotFoundPage, PaymentNotCompletedPage, PayPage, WaitingPage, type OwedRenewal } from './views/PayPage.js';

function payLinkDepsOf(deps: AppDeps): PayLinkDeps {
  return { db: deps.db, clock: deps.clock ?? systemClock, payments: deps.payments!, livePayments: deps.stripe?.processor ?? null, liveRequired: deps.liveRequired ?? false, baseUrl: deps.baseUrl };
}

const tokenOf = (req: Request) => String(req.params.token);
const pathOf = (token: string) => `/pay/${encodeURIComponent(token)}`;
const isStripe = (mode: PaymentModeName) => mode === 'stripe_live' || mode === 'stripe_test';
const waiting = (payment: Payment | undefined) => payment?.status === 'requires_action' || payment?.status === 'processing' || payment?.status === 'created';

function owedOf(view: PayLinkView): OwedRenewal {
  return {
    sellerName: view.sellerName,
    productName: view.productName,
    customerEmail: view.customer.email,
    amount: view.order.totalAmount,
    currency: view.order.currency,
    lines: view.order.items.map((item) => ({ label: item.label, amount: item.amount })),
    invoiceNumber: view.order.invoiceNumber,
    expiresAt: view.link.expiresAt,
  };
}

/** The link a token opens (its waiting try asked about first when `refresh`); null (and the 404 page sent) for a token no link has. */
async function load(deps: AppDeps, token: string, res: Response, options: { refresh?: boolean } = {}): Promise<PayLinkView | null> {
  try {
    return options.refresh ? await openPayLinkRefreshed(payLinkDepsOf(deps), token) : await openPayLink(deps.db, deps.clock ?? systemClock, token);
  } catch (error) {
    if (!isCoreError(error) || error.kind !== 'not_found') throw error;
    sendPage(res, 404, <PayLinkNotFoundPage />);
    return null;
  }
}

/** Sends the page for a link that cannot take a card now (paid, expired, closed, or a payment in flight); false otherwise. */
function sendSettled(res: Response, view: PayLinkView, mode: PaymentModeName, token: string): boolean {
  const owed = owedOf(view);
  if (view.state === 'paid') {
    sendPage(res, 200, <PaidPage owed={owed} mode={mode} byThisPage={view.lastTry?.status === 'succeeded' && view.order.paymentId === view.lastTry.id} />);
    return true;
  }
  if (view.state === 'expired' || view.state === 'closed') {
    sendPage(res, view.state === 'expired' ? 410 : 409, <PayLinkClosedPage owed={owed} expired={view.state === 'expired'} />);
    return true;
  }
  if (waiting(view.lastTry)) {
    sendPage(res, 200, <WaitingPage owed={owed} mode={mode} refreshUrl={pathOf(token)} />);
    return true;
  }
  return false;
}

async function sendForm(deps: AppDeps, res: Response, status: number, view: PayLinkView, mode: PaymentModeName, token: string, errors?: { form?: string; fields?: FieldErrors }): Promise<void> {
  if (isStripe(mode)) allowStripe(res);
  sendPage(res, status, <PayPage owed={owedOf(view)} mode={mode} publishableKey={deps.stripe?.publishableKey ?? null} action={pathOf(token)} errors={errors} />);
}

/** GET /pay/:token: what is owed and the card form; or that it is paid, expired, closed, or being confirmed. */
export function showPayLink(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const token = tokenOf(req);
    // A payment still waiting (the sandbox sends no events; Stripe's may be late): the processor is asked on each refresh.
    const view = await load(deps, token, res, { refresh: true });
    if (!view) return;
    const mode = await organizationPaymentMode(deps, view.link.organizationId);
    if (sendSettled(res, view, mode, token)) return;
    const failed = view.lastTry?.status === 'failed' && req.query.notice === 'payment-failed';
    await sendForm(deps, res, 200, view, mode, token, failed ? { form: notCompleted(view.lastTry!) } : undefined);
  };
}

const notCompleted = (payment: Payment) => `Your payment did not go through: ${payment.declineMessage ?? 'your card was declined.'} Nothing was charged; try again or use another card.`;

/** Service errors about fields go beside the card inputs; anything else above the form. */
function errorsOf(error: CoreError): { form?: string; fields?: FieldErrors } {
  const details = Array.isArray(error.details) ? (error.details as { loc?: unknown; msg?: unknown }[]) : [];
  const fields: FieldErrors = {};
  for (const detail of details) {
    const last = Array.isArray(detail.loc) ? detail.loc[detail.loc.length - 1] : undefined;
    if ((last === 'confirmation_token_id' || last === 'card_number') && typeof detail.msg === 'string') fields[last] ??= detail.msg;
  }
  return Object.keys(fields).length ? { fields } : { form: error.message };
}

/** POST /pay/:token: pays the owed renewal with the card typed (sandbox) or Stripe's ConfirmationToken. */
export function submitPayLink(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const token = tokenOf(req);
    const view = await load(deps, token, res);
    if (!view) return;
    const mode = await organizationPaymentMode(deps, view.link.organizationId);
    if (sendSettled(res, view, mode, token)) return;
    const again = (status: number, errors: { form?: string; fields?: FieldErrors }) => sendForm(deps, res, status, view, mode, token, errors);
    if (mode === 'not_configured') return again(409, { form: `${view.sellerName} cannot take payments at the moment. Nothing was charged.` });
    const sent = paymentMethodOf(req.body, mode === 'sandbox', 'pay here');
    if (!sent.ok) return again(400, sent.errors);
    const method = sent.method;
    let payment: Payment;
    try {
      payment = await payWithLink(payLinkDepsOf(deps), token, method);
    } catch (error) {
      if (!isCoreError(error)) throw error;
      const current = await load(deps, token, res);
      if (!current || sendSettled(res, current, mode, token)) return;
      if (error.kind === 'invalid') return again(400, errorsOf(error));
      if (error.kind === 'not_found') throw error;
      return again(409, { form: error.message });
    }
    if (payment.status === 'failed') return again(402, { form: notCompleted(payment) });
    // 3-D Secure: the customer authenticates at the processor's page, which comes back to /pay/return/:paymentId.
    if (payment.status === 'requires_action' && payment.redirectUrl) return sendToAuthenticate(deps, res, payment.redirectUrl);
    res.redirect(303, pathOf(token));
  };
}

/**
 * GET /pay/return/:paymentId?key=…: where the bank's page (the sandbox's, Stripe's) sends the customer back. The
 * processor is asked where the payment stands; the page says paid, not completed, or waits. It names the payment
 * and the key made for its return (core/billing/pay-links/return-url.ts), not the link: the link's token is never
 * part of a URL Till stores. Without that key (a payment id alone, a forged key) it is the same 404 as an unknown
 * payment, and asks the processor nothing.
 */
export function showPayReturn(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const key = req.query.key;
    const back = await returnToPayLink(payLinkDepsOf(deps), String(req.params.paymentId), key);
    if (!back) return sendPage(res, 404, <PayLinkNotFoundPage />);
    const { payment, view } = back;
    const mode = await organizationPaymentMode(deps, view.link.organizationId);
    const owed = owedOf(view);
    if (payment.status === 'succeeded') return sendPage(res, 200, <PaidPage owed={owed} mode={mode} byThisPage={view.order.paymentId === payment.id} />);
    if (payment.status === 'failed') return sendPage(res, 402, <PaymentNotCompletedPage owed={owed} mode={mode} reason={`Your payment did not go through: ${payment.declineMessage ?? 'your card was declined.'}`} />);
    sendPage(res, 200, <WaitingPage owed={owed} mode={mode} refreshUrl={payReturnPath(payment.id, String(key))} />);
  };
}
