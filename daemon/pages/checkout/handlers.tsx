import type { Request, RequestHandler, Response } from 'express';
import type { AppDeps } from '../../app.js';
import { confirmCheckout, getCheckoutByClientSecret, updateCheckoutPublic, type CheckoutDeps } from '../../../core/billing/checkouts/service.js';
import { serializeCheckoutPublic } from '../../../core/billing/checkouts/serialize.js';
import { systemClock } from '../../../core/clock.js';
import { organizationClock } from '../../../core/jobs/clock.js';
import { processorFor } from '../../../core/payments/select.js';
import { CoreError, isCoreError } from '../../../core/errors.js';
import { CheckoutUpdatePublic } from '../../../core/billing/checkouts/schema.js';
import type { FieldErrors, FormErrors } from '../forms.js';
import { sendPage } from '../render.js';
import { loadReceipt } from './receipt.js';
import { formatMoney } from './money.js';
import { discountEnds, type Renewal } from './describe.js';
import { computeAmounts, taxBasisPointsFor } from '../../../core/billing/pricing/amounts.js';
import { inputForLocation, parseCard, parseCheckoutForm, type ParsedCheckoutForm } from './form.js';
import type { CheckoutWire } from './types.js';
import { CheckoutClosedPage, CheckoutNotFoundPage } from './views/CheckoutClosedPage.js';
import { CheckoutPage } from './views/CheckoutPage.js';
import { ConfirmationPage } from './views/ConfirmationPage.js';

/** Fixed notices named in the URL after a redirect: the URL never decides what text the page shows. */
const NOTICES: Record<string, string> = {
  'discount-applied': 'Discount applied: the total below includes it.',
  'discount-removed': 'Discount removed.',
  updated: 'Your details are saved and the total is up to date.',
};

function checkoutDepsOf(deps: AppDeps): CheckoutDeps {
  return { db: deps.db, clock: deps.clock ?? systemClock, payments: deps.payments!, livePayments: deps.stripe?.processor ?? null, baseUrl: deps.baseUrl };
}

/** Whether the checkout's organization pays through the sandbox (its test cards are shown) rather than Stripe. */
const isSandbox = async (deps: AppDeps, checkout: CheckoutWire) =>
  (await processorFor(deps.db, { payments: deps.payments!, livePayments: deps.stripe?.processor ?? null }, checkout.organization_id)).name === 'sandbox';
const pathOf = (secret: string) => `/checkout/${encodeURIComponent(secret)}`;

/** The checkout as the client endpoints answer it; null (and a 404 page sent) for an unknown secret. */
async function load(deps: AppDeps, secret: string, res: Response): Promise<CheckoutWire | null> {
  try {
    const checkout = serialize(deps, await getCheckoutByClientSecret(checkoutDepsOf(deps), secret));
    // Past its expiry an open checkout is closed already, even before the expiry job has marked it.
    const now = (await organizationClock(deps.db, deps.clock ?? systemClock, checkout.organization_id)).now();
    return checkout.status === 'open' && new Date(checkout.expires_at) <= now ? { ...checkout, status: 'expired' } : checkout;
  } catch (error) {
    if (!isCoreError(error) || error.kind !== 'not_found') throw error;
    sendPage(res, 404, <CheckoutNotFoundPage />);
    return null;
  }
}

const secretOf = (req: Request) => String(req.params.clientSecret);

/**
 * A checkout created with an `embed_origin` may be framed by that origin (Polar's embedded checkout); every
 * other page keeps helmet's `frame-ancestors 'self'`, so no other site can frame the card form.
 */
function allowEmbedding(res: Response, checkout: CheckoutWire): void {
  if (!checkout.embed_origin) return;
  let origin: string;
  try {
    origin = new URL(checkout.embed_origin).origin;
  } catch {
    return;
  }
  const policy = res.getHeader('Content-Security-Policy');
  if (typeof policy !== 'string' || origin === 'null') return;
  res.setHeader('Content-Security-Policy', policy.replace(/frame-ancestors [^;]*/, `frame-ancestors 'self' ${origin}`));
  res.removeHeader('X-Frame-Options');
}

/** An open checkout shows its form; a paid one its confirmation; an expired or failed one says so. */
function sendClosed(res: Response, checkout: CheckoutWire): boolean {
  if (checkout.status === 'open') return false;
  if (checkout.status === 'succeeded' || checkout.status === 'confirmed') {
    res.redirect(303, `${pathOf(checkout.client_secret)}/confirmation`);
    return true;
  }
  sendPage(res, checkout.status === 'expired' ? 410 : 409, <CheckoutClosedPage checkout={checkout} />);
  return true;
}

/** GET /checkout/:clientSecret: the form. */
export function showCheckout(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const checkout = await load(deps, secretOf(req), res);
    if (!checkout) return;
    allowEmbedding(res, checkout);
    if (sendClosed(res, checkout)) return;
    const notice = typeof req.query.notice === 'string' ? NOTICES[req.query.notice] : undefined;
    const renewal = await renewalOf(deps, checkout);
    sendPage(res, 200, <CheckoutPage checkout={checkout} action={pathOf(checkout.client_secret)} notice={notice} sandbox={await isSandbox(deps, checkout)} renewal={renewal} />);
  };
}

/** Service errors about fields go beside their inputs; anything else above the form. */
function formErrorsOf(error: CoreError): FormErrors {
  const fields: FieldErrors = {};
  const details = Array.isArray(error.details) ? (error.details as { loc?: unknown; msg?: unknown }[]) : [];
  const unplaced: string[] = [];
  for (const detail of details) {
    const input = Array.isArray(detail.loc) ? inputForLocation(detail.loc) : undefined;
    const message = typeof detail.msg === 'string' ? detail.msg : error.message;
    if (input && KNOWN_INPUT.test(input)) fields[input] ??= message;
    else unplaced.push(message);
  }
  if (Object.keys(fields).length === 0) return { form: error.message };
  return unplaced.length > 0 ? { form: unplaced.join(' '), fields } : { fields };
}

/** The inputs the page has: anything else a service names goes in the message above the form. */
const KNOWN_INPUT = /^(customer_email|customer_name|customer_billing_name|customer_tax_id|amount|product_id|discount_code|card_number|card_expiry|card_cvc|address_[a-z0-9_]+|cf_[a-z0-9_-]+)$/;

/**
 * POST /checkout/:clientSecret: saves what was typed (recalculating the total), then applies or removes a
 * discount, or pays. A payment is only taken for the total the customer saw; when the change just made moves
 * it (a new country's tax, another product), the page shows the new total and asks again.
 */
export function submitCheckout(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const secret = secretOf(req);
    const checkoutDeps = checkoutDepsOf(deps);
    const found = await load(deps, secret, res);
    if (!found) return;
    allowEmbedding(res, found);
    if (sendClosed(res, found)) return;
    let checkout = found;
    const form = parseCheckoutForm(checkout, req.body);
    const again = async (status: number, errors: FormErrors, notice?: string, shown: CheckoutWire = checkout, typed = form.typed) => {
      const renewal = await renewalOf(deps, shown);
      sendPage(res, status, <CheckoutPage checkout={shown} action={pathOf(secret)} typed={typed} errors={errors} notice={notice} sandbox={await isSandbox(deps, shown)} renewal={renewal} />);
    };

    const card = form.intent === 'pay' && checkout.is_payment_form_required ? parseCard(req.body) : null;
    const localErrors = { ...form.errors, ...(card && !card.ok ? card.errors : {}) };
    if (Object.keys(localErrors).length > 0) return again(400, { fields: localErrors });

    const update = CheckoutUpdatePublic.safeParse(form.update);
    if (!update.success) return again(400, formErrorsOf(new CoreError('invalid', 'INVALID_CHECKOUT_FORM', 'Some details need your attention.', update.error.issues.map((issue) => ({ loc: ['body', ...issue.path], msg: issue.message })))));
    try {
      checkout = serialize(deps, await updateCheckoutPublic(checkoutDeps, secret, update.data));
    } catch (error) {
      const refused = form.intent === 'pay' && update.data.discount_code ? discountCodeRefusal(error) : undefined;
      if (!refused) return sendServiceError(error, again, deps, secret, res);
      // A code that does not apply never stands between the buyer and paying: the rest is saved without it, the
      // refusal is shown beside the emptied field, and the next press of the button pays the total shown.
      try {
        checkout = serialize(deps, await updateCheckoutPublic(checkoutDeps, secret, { ...update.data, discount_code: undefined }));
      } catch (retryError) {
        return sendServiceError(retryError, again, deps, secret, res);
      }
      const message = `“${update.data.discount_code}” was not applied: ${lowerFirst(refused)} You can pay without it, or try another code.`;
      return again(400, { fields: { discount_code: message } }, undefined, checkout, { ...form.typed, discount_code: '' });
    }

    if (form.intent !== 'pay') return res.redirect(303, `${pathOf(secret)}?notice=${noticeFor(form)}`);

    if (form.expectedTotal !== checkout.total_amount) {
      return again(409, {}, `The total is now ${formatMoney(checkout.total_amount, checkout.currency)}. Check it, then pay again.`, checkout);
    }
    // The total may have dropped to zero (a 100% discount) while the card form was shown: no card is needed then.
    const paymentMethod = checkout.is_payment_form_required && card?.ok ? card.card : undefined;
    if (checkout.is_payment_form_required && !paymentMethod) {
      return again(400, { fields: parseCardErrorsOrRequired(req.body) }, undefined, checkout);
    }
    try {
      await confirmCheckout(checkoutDeps, secret, {}, { paymentMethod });
    } catch (error) {
      const refused = checkout.discount ? discountCodeRefusal(error) : undefined;
      if (!refused) return sendServiceError(error, again, deps, secret, res);
      // The applied discount stopped applying (used up, expired) since it was shown: it is taken off, and the
      // buyer sees the new total before paying it.
      try {
        checkout = serialize(deps, await updateCheckoutPublic(checkoutDeps, secret, { discount_code: '' }));
      } catch (retryError) {
        return sendServiceError(retryError, again, deps, secret, res);
      }
      const reason = refused.replace(/ Remove it to pay without it\.$/, '');
      const message = `${reason} It was removed, so the total is now ${formatMoney(checkout.total_amount, checkout.currency)}: pay again to pay without it.`;
      return again(400, { fields: { discount_code: message } }, undefined, checkout, { ...form.typed, discount_code: '' });
    }
    res.redirect(303, `${pathOf(secret)}/confirmation`);
  };
}

/** The service's reason for refusing the discount code, when that is all it refused. */
function discountCodeRefusal(error: unknown): string | undefined {
  if (!isCoreError(error) || error.kind !== 'invalid' || !Array.isArray(error.details) || error.details.length !== 1) return undefined;
  const [detail] = error.details as { loc?: unknown; msg?: unknown }[];
  const onCode = Array.isArray(detail?.loc) && detail.loc[detail.loc.length - 1] === 'discount_code';
  return onCode && typeof detail?.msg === 'string' ? detail.msg : undefined;
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/** What the renewals of a subscription cost when its discount ends; null when every payment is the total shown. */
async function renewalOf(deps: AppDeps, checkout: CheckoutWire): Promise<Renewal | null> {
  if (!discountEnds(checkout)) return null;
  const taxKnown = checkout.tax_amount !== null;
  const taxBasisPoints = taxKnown ? await taxBasisPointsFor(deps.db, checkout.organization_id, checkout.customer_billing_address) : 0;
  return { total: computeAmounts({ subtotalAmount: checkout.amount, discount: null, taxBasisPoints }).totalAmount, taxKnown };
}

function parseCardErrorsOrRequired(body: unknown): FieldErrors {
  const card = parseCard(body);
  return card.ok ? {} : card.errors;
}

const serialize = (deps: AppDeps, checkout: Parameters<typeof serializeCheckoutPublic>[0]) => serializeCheckoutPublic(checkout, deps.baseUrl) as unknown as CheckoutWire;

function noticeFor(form: ParsedCheckoutForm): string {
  if (form.intent === 'apply_discount') return 'discount-applied';
  if (form.intent === 'remove_discount') return 'discount-removed';
  return 'updated';
}

/** A refusal from the checkout service as the page shows it; a checkout that closed meanwhile shows why. */
async function sendServiceError(
  error: unknown,
  again: (status: number, errors: FormErrors, notice?: string, shown?: CheckoutWire) => Promise<void>,
  deps: AppDeps,
  secret: string,
  res: Response,
): Promise<void> {
  if (!isCoreError(error)) throw error;
  // The checkout may have changed (a failed payment is recorded, an expired one closed): show it as it is now.
  const current = await load(deps, secret, res);
  if (!current || sendClosed(res, current)) return;
  if (error.kind === 'payment_failed' || error.code === 'CHECKOUT_PAYMENT_DECLINED') {
    return again(402, { form: `${error.message} Try another card.`, fields: {} }, undefined, current);
  }
  if (error.kind === 'invalid') return again(400, formErrorsOf(error), undefined, current);
  if (error.kind === 'not_found') throw error;
  return again(409, { form: error.message }, undefined, current);
}

/** GET /checkout/:clientSecret/confirmation: what was bought, the receipt, the benefits; then the seller's success URL. */
export function showConfirmation(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const checkout = await load(deps, secretOf(req), res);
    if (!checkout) return;
    allowEmbedding(res, checkout);
    if (checkout.status === 'open') return res.redirect(303, pathOf(checkout.client_secret));
    if (checkout.status !== 'succeeded' && checkout.status !== 'confirmed') {
      return sendPage(res, checkout.status === 'expired' ? 410 : 409, <CheckoutClosedPage checkout={checkout} />);
    }
    const receipt = checkout.status === 'succeeded' ? await loadReceipt(deps.db, checkout) : null;
    sendPage(res, 200, <ConfirmationPage checkout={checkout} receipt={receipt} baseUrl={deps.baseUrl} sandbox={await isSandbox(deps, checkout)} />);
  };
}
