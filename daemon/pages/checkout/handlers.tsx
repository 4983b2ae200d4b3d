import type { Request, RequestHandler, Response } from 'express';
import type { AppDeps } from '../../app.js';
import { confirmCheckout, getCheckoutByClientSecret, updateCheckoutPublic, type CheckoutDeps } from '../../../core/billing/checkouts/service.js';
import { serializeCheckoutPublic } from '../../../core/billing/checkouts/serialize.js';
import { systemClock } from '../../../core/clock.js';
import { organizationClock } from '../../../core/jobs/clock.js';
import { paymentsOfCheckout } from '../../../core/payments/repository.js';
import { refreshIntent } from '../../../core/billing/payments/settle.js';
import { organizationPaymentMode, type PaymentModeName } from '../../payment-mode.js';
import { CoreError, isCoreError } from '../../../core/errors.js';
import { CheckoutUpdatePublic } from '../../../core/billing/checkouts/schema.js';
import type { FieldErrors, FormErrors } from '../forms.js';
import { sendPage } from '../render.js';
import { loadReceipt } from './receipt.js';
import { formatMoney } from './money.js';
import { discountEnds, type Renewal } from './describe.js';
import { computeAmounts, taxBasisPointsFor } from '../../../core/billing/pricing/amounts.js';
import { inputForLocation, parseCard, parseCheckoutForm, paymentMethodOf, type ParsedCheckoutForm } from './form.js';
import type { CheckoutWire } from './types.js';
import type { PaymentMethodInput } from '../../../core/payments/processor.js';
import { CheckoutClosedPage, CheckoutNotFoundPage } from './views/CheckoutClosedPage.js';
import { CheckoutPage } from './views/CheckoutPage.js';
import { ConfirmationPage } from './views/ConfirmationPage.js';
import { RedirectPage } from './views/RedirectPage.js';

/** Fixed notices named in the URL after a redirect: the URL never decides what text the page shows. */
const NOTICES: Record<string, string> = {
  'discount-applied': 'Discount applied: the total below includes it.',
  'discount-removed': 'Discount removed.',
  updated: 'Your details are saved and the total is up to date.',
};

function checkoutDepsOf(deps: AppDeps): CheckoutDeps {
  return { db: deps.db, clock: deps.clock ?? systemClock, payments: deps.payments!, livePayments: deps.stripe?.processor ?? null, liveRequired: deps.liveRequired ?? false, baseUrl: deps.baseUrl };
}

/** How the checkout's organization takes money: the sandbox (its test cards are shown), Stripe, or not at all. */
const modeOf = (deps: AppDeps, checkout: CheckoutWire) => organizationPaymentMode(deps, checkout.organization_id);
const isStripe = (mode: PaymentModeName) => mode === 'stripe_live' || mode === 'stripe_test';

/** Exactly what Stripe.js needs (docs.stripe.com/security/guide, CSP): its script, its frames, its API. */
const STRIPE_CSP = {
  'script-src': ['https://js.stripe.com', 'https://*.js.stripe.com'],
  'frame-src': ['https://js.stripe.com', 'https://*.js.stripe.com', 'https://hooks.stripe.com'],
  'connect-src': ['https://api.stripe.com'],
} as const;

/** A page with Stripe's Payment Element lets Stripe.js load, frame and call Stripe; every other page keeps 'self' only. */
export function allowStripe(res: Response): void {
  const policy = res.getHeader('Content-Security-Policy');
  if (typeof policy !== 'string') return;
  let next = policy;
  for (const [directive, sources] of Object.entries(STRIPE_CSP)) {
    const present = new RegExp(`(^|;)\\s*${directive} ([^;]*)`);
    next = present.test(next) ? next.replace(present, (_all, start, list) => `${start}${directive} ${list} ${sources.join(' ')}`) : `${next};${directive} 'self' ${sources.join(' ')}`;
  }
  res.setHeader('Content-Security-Policy', next);
}

/** The checkout page as it is sent: with the payment mode, and Stripe.js allowed where the Payment Element shows. */
async function sendCheckoutPage(deps: AppDeps, res: Response, status: number, props: Omit<Parameters<typeof CheckoutPage>[0], 'mode' | 'publishableKey'>): Promise<void> {
  const mode = await modeOf(deps, props.checkout);
  if (isStripe(mode) && props.checkout.is_payment_form_required) allowStripe(res);
  sendPage(res, status, <CheckoutPage {...props} mode={mode} publishableKey={deps.stripe?.publishableKey ?? null} />);
}
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
    let checkout = await load(deps, secretOf(req), res);
    if (!checkout) return;
    if (checkout.status === 'confirmed' && typeof req.query.redirect_status === 'string') {
      await askProcessor(deps, checkout);
      checkout = await load(deps, secretOf(req), res);
      if (!checkout) return;
    }
    allowEmbedding(res, checkout);
    if (sendClosed(res, checkout)) return;
    // Back from a failed authentication, or sent back by the waiting page: the page says why the payment failed.
    const failed = req.query.notice === 'payment-failed' || req.query.redirect_status === 'failed';
    const notice = failed ? await failureNotice(deps, checkout) : typeof req.query.notice === 'string' ? NOTICES[req.query.notice] : undefined;
    const renewal = await renewalOf(deps, checkout);
    await sendCheckoutPage(deps, res, 200, { checkout, action: pathOf(checkout.client_secret), notice, renewal });
  };
}

/** Why the checkout's last payment did not go through (a declined card, a failed 3-D Secure), for the page to say. */
async function failureNotice(deps: AppDeps, checkout: CheckoutWire): Promise<string | undefined> {
  const last = (await paymentsOfCheckout(deps.db, checkout.id)).at(-1);
  if (!last || last.status !== 'failed') return undefined;
  return `Your payment was not completed: ${last.declineMessage ?? 'your card was declined.'} Nothing was charged; try again or use another card.`;
}

/**
 * Asks the processor where the waiting payment of a confirmed checkout stands, so the page need not wait for the
 * processor's event: when the customer is back from authenticating (the return URL carries `redirect_status`, as
 * Stripe's does), and on each refresh of the waiting page in the sandbox (which has no events to send).
 */
async function askProcessor(deps: AppDeps, checkout: CheckoutWire): Promise<void> {
  if (checkout.status !== 'confirmed') return;
  const waiting = (await paymentsOfCheckout(deps.db, checkout.id)).filter((payment) => payment.status === 'requires_action' || payment.status === 'processing').at(-1);
  if (!waiting) return;
  const clock = await organizationClock(deps.db, deps.clock ?? systemClock, checkout.organization_id);
  // A processor that cannot be asked now leaves it to its event and the settle job: the page waits either way.
  await refreshIntent({ ...checkoutDepsOf(deps), clock }, waiting.id, { abandonIfWaiting: false }).catch((err) => deps.logger.warn({ err, payment: waiting.id }, 'asking the processor on return failed'));
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
      await sendCheckoutPage(deps, res, status, { checkout: shown, action: pathOf(secret), typed, errors, notice, renewal });
    };

    // The sandbox takes a typed card; Stripe's Payment Element posts the ConfirmationToken it made instead.
    const mode = await modeOf(deps, checkout);
    const card = form.intent === 'pay' && checkout.is_payment_form_required && mode === 'sandbox' ? parseCard(req.body) : null;
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
    let paymentMethod: PaymentMethodInput | undefined;
    if (checkout.is_payment_form_required) {
      if (mode === 'not_configured') return again(409, { form: `${checkout.organization.name} cannot take payments yet, so this checkout cannot be paid. Nothing was charged.` }, undefined, checkout);
      if (mode === 'sandbox') {
        if (!card?.ok) return again(400, { fields: parseCardErrorsOrRequired(req.body) }, undefined, checkout);
        paymentMethod = card.card;
      } else {
        const sent = paymentMethodOf(req.body, false, 'pay here');
        if (!sent.ok) return again(400, sent.errors, undefined, checkout);
        paymentMethod = sent.method;
      }
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
    // 3-D Secure: the customer authenticates at the processor's page, which comes back to this checkout.
    const waiting = (await paymentsOfCheckout(deps.db, checkout.id)).at(-1);
    if (waiting?.status === 'requires_action' && waiting.redirectUrl) return sendToAuthenticate(deps, res, waiting.redirectUrl);
    // Still processing: the waiting page shows first, and its refreshes ask the processor (see showConfirmation).
    res.redirect(303, `${pathOf(secret)}/confirmation${waiting?.status === 'processing' ? '?processing=1' : ''}`);
  };
}

/**
 * To the processor's authentication page: a redirect when it is tilld's own (the sandbox's), else a page that goes
 * on by itself, since CSP `form-action 'self'` stops a form post from being redirected to another site.
 */
export function sendToAuthenticate(deps: AppDeps, res: Response, url: string): void {
  let target: URL;
  try {
    target = new URL(url, deps.baseUrl);
  } catch {
    return void res.redirect(303, '/');
  }
  if (target.origin === new URL(deps.baseUrl).origin) return void res.redirect(303, `${target.pathname}${target.search}`);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') return void res.redirect(303, '/');
  sendPage(res, 200, <RedirectPage url={target.toString()} />);
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
    let checkout = await load(deps, secretOf(req), res);
    if (!checkout) return;
    // The sandbox sends no events: each refresh of the waiting page asks it (not the first showing, right after paying).
    if (checkout.status === 'confirmed' && req.query.processing === undefined && (await modeOf(deps, checkout)) === 'sandbox') {
      await askProcessor(deps, checkout);
      checkout = await load(deps, secretOf(req), res);
      if (!checkout) return;
    }
    allowEmbedding(res, checkout);
    if (checkout.status === 'open') {
      // Back to the form; a payment that failed meanwhile (3-D Secure abandoned, the bank said no) is said there.
      const failed = (await paymentsOfCheckout(deps.db, checkout.id)).at(-1)?.status === 'failed';
      return res.redirect(303, `${pathOf(checkout.client_secret)}${failed ? '?notice=payment-failed' : ''}`);
    }
    if (checkout.status !== 'succeeded' && checkout.status !== 'confirmed') {
      return sendPage(res, checkout.status === 'expired' ? 410 : 409, <CheckoutClosedPage checkout={checkout} />);
    }
    const receipt = checkout.status === 'succeeded' ? await loadReceipt(deps.db, checkout) : null;
    sendPage(res, 200, <ConfirmationPage checkout={checkout} receipt={receipt} baseUrl={deps.baseUrl} mode={await modeOf(deps, checkout)} />);
  };
}
