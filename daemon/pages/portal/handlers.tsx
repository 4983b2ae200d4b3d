import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../../app.js';
import { systemClock } from '../../../core/clock.js';
import { CoreError, isCoreError } from '../../../core/errors.js';
import { createMailer, DEFAULT_MAIL_FROM } from '../../../core/mail/mailer.js';
import { requestPortalCode, verifyPortalCode, type PortalCodeDeps } from '../../../core/billing/customer-sessions/portal-codes.js';
import { deleteCustomerSession, exchangeCustomerSession, type CustomerPrincipal } from '../../../core/billing/customer-sessions/service.js';
import { invoiceLink } from '../../../core/billing/orders/invoice.js';
import { getOrder } from '../../../core/billing/orders/service.js';
import type { Organization } from '../../../core/billing/organizations/schema.js';
import { CANCELLATION_REASONS } from '../../../core/billing/subscriptions/schema.js';
import { getSubscription } from '../../../core/billing/subscriptions/service.js';
import { updateSubscription } from '../../../core/billing/subscriptions/update.js';
import { fieldOf } from '../forms.js';
import { sendPage } from '../render.js';
import { loadOverview, portalSubscriptionOf } from './data.js';
import { clearPortalCookie, portalCustomer, portalOrganization, portalPath, portalToken, setPortalCookie } from './session.js';
import { PortalCancelPage } from './views/CancelPage.js';
import { PortalOverviewPage } from './views/OverviewPage.js';
import { PortalCodePage, PortalNotFoundPage, PortalSignInPage } from './views/SignInPages.js';

/** Fixed notices named in the URL after a redirect: the URL never decides what text the page shows. */
const NOTICES: Record<string, string> = {
  canceled: 'Your subscription is canceled: it stays active until the end of the period you paid for.',
  uncanceled: 'Your subscription continues: it renews as before.',
  'plan-changed': 'Your plan is changed.',
  'email-changed': 'Your email address is changed.',
  'signed-out': 'You are signed out.',
  'link-expired': 'That sign-in link has expired or was already replaced. Sign in with your email address instead.',
  'session-expired': 'Your session has ended. Sign in again to continue.',
};
const noticeOf = (req: Request) => (typeof req.query.notice === 'string' ? NOTICES[req.query.notice] : undefined);

const Email = z.email('Enter an email address, like name@example.com.').max(320);

const slugOf = (req: Request) => String(req.params.slug);
export const clockOf = (deps: AppDeps) => deps.clock ?? systemClock;

/** An app built without a mailer (tests of createApp alone) keeps the codes' mail in its database's outbox. */
async function codeDeps(deps: AppDeps): Promise<PortalCodeDeps> {
  const mailer = deps.mailer ?? createMailer(deps.db, { from: DEFAULT_MAIL_FROM });
  return { db: deps.db, clock: clockOf(deps), mailer, secret: (await deps.auth.$context).secret };
}

/** The organization the path names; null (and a 404 page sent) for an unknown slug. */
export async function organizationOf(deps: AppDeps, req: Request, res: Response): Promise<Organization | null> {
  const organization = await portalOrganization(deps, slugOf(req));
  if (!organization) {
    sendPage(res, 404, <PortalNotFoundPage />);
    return null;
  }
  return organization;
}

/** The organization and its signed-in customer; null (and the browser sent to sign in) without a live session. */
export async function signedIn(deps: AppDeps, req: Request, res: Response): Promise<{ organization: Organization; principal: CustomerPrincipal } | null> {
  const organization = await organizationOf(deps, req, res);
  if (!organization) return null;
  const principal = await portalCustomer(deps, req, organization);
  if (!principal) {
    res.redirect(303, `${portalPath(organization.slug)}?notice=session-expired`);
    return null;
  }
  return { organization, principal };
}

async function sendOverview(deps: AppDeps, res: Response, status: number, organization: Organization, principal: CustomerPrincipal, extra: { notice?: string; error?: string } = {}) {
  const overview = await loadOverview(deps, principal, organization);
  sendPage(res, status, <PortalOverviewPage seller={organization.name} base={portalPath(organization.slug)} overview={overview} returnUrl={safeReturnUrl(principal.returnUrl)} {...extra} />);
}

/** Only http(s) return URLs become links (a seller's return_url is checked on the way in; this keeps javascript: out). */
function safeReturnUrl(url: string | null): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.toString() : null;
  } catch {
    return null;
  }
}

/**
 * GET /portal/:slug — the portal link (with `customer_session_token`) signs in and comes back here without it; a
 * signed-in customer sees the overview; anyone else the email sign-in.
 */
export function showPortal(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const organization = await organizationOf(deps, req, res);
    if (!organization) return;
    const base = portalPath(organization.slug);
    const token = typeof req.query.customer_session_token === 'string' ? req.query.customer_session_token : undefined;
    if (token) {
      const exchanged = await exchangeCustomerSession(deps.db, clockOf(deps), token);
      if (!exchanged || exchanged.session.organizationId !== organization.id) return res.redirect(303, `${base}?notice=link-expired`);
      setPortalCookie(deps, res, organization.slug, exchanged.token);
      return res.redirect(303, base);
    }
    const principal = await portalCustomer(deps, req, organization);
    if (!principal) return sendPage(res, 200, <PortalSignInPage seller={organization.name} base={base} notice={noticeOf(req)} />);
    await sendOverview(deps, res, 200, organization, principal, { notice: noticeOf(req) });
  };
}

/** POST /portal/:slug/sign-in — mails a code when the address is a customer's; the answer is the same either way. */
export function submitPortalEmail(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const organization = await organizationOf(deps, req, res);
    if (!organization) return;
    const base = portalPath(organization.slug);
    const typed = fieldOf(req.body, 'email').trim();
    const email = Email.safeParse(typed);
    if (!email.success) return sendPage(res, 400, <PortalSignInPage seller={organization.name} base={base} email={typed} fieldError={email.error.issues[0]!.message} />);
    try {
      await requestPortalCode(await codeDeps(deps), organization, { email: email.data, ip: req.ip ?? 'unknown', signInUrl: `${deps.baseUrl.replace(/\/$/, '')}${base}/sign-in/code?${new URLSearchParams({ email: email.data })}` });
    } catch (error) {
      if (!isCoreError(error) || error.kind !== 'rate_limited') throw error;
      return sendPage(res, 429, <PortalSignInPage seller={organization.name} base={base} email={typed} error={error.message} />);
    }
    res.redirect(303, `${base}/sign-in/code?${new URLSearchParams({ email: email.data })}`);
  };
}

/** GET /portal/:slug/sign-in/code — where the code from the mail is typed. */
export function showPortalCode(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const organization = await organizationOf(deps, req, res);
    if (!organization) return;
    const email = Email.safeParse(typeof req.query.email === 'string' ? req.query.email : '');
    if (!email.success) return res.redirect(303, portalPath(organization.slug));
    sendPage(res, 200, <PortalCodePage seller={organization.name} base={portalPath(organization.slug)} email={email.data} />);
  };
}

/** POST /portal/:slug/sign-in/code — a right code signs in (once); a wrong one says so, without saying more. */
export function submitPortalCode(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const organization = await organizationOf(deps, req, res);
    if (!organization) return;
    const base = portalPath(organization.slug);
    const email = Email.safeParse(fieldOf(req.body, 'email').trim());
    if (!email.success) return res.redirect(303, base);
    try {
      const { token } = await verifyPortalCode(await codeDeps(deps), organization, { email: email.data, code: fieldOf(req.body, 'code') });
      setPortalCookie(deps, res, organization.slug, token);
      res.redirect(303, base);
    } catch (error) {
      if (!isCoreError(error) || error.kind !== 'invalid') throw error;
      sendPage(res, 400, <PortalCodePage seller={organization.name} base={base} email={email.data} error={error.message} />);
    }
  };
}

/** POST /portal/:slug/sign-out — the session ends on the server too, not only in this browser. */
export function signOutOfPortal(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const organization = await organizationOf(deps, req, res);
    if (!organization) return;
    const token = portalToken(req);
    if (token) await deleteCustomerSession(deps.db, token);
    clearPortalCookie(deps, res, organization.slug);
    res.redirect(303, `${portalPath(organization.slug)}?notice=signed-out`);
  };
}

/** One of the signed-in customer's running subscriptions; another customer's is not found, as an unknown one. */
export async function ownSubscription(deps: AppDeps, principal: CustomerPrincipal, id: string) {
  const view = await getSubscription(deps.db, new Set([principal.organizationId]), id);
  if (view.subscription.customerId !== principal.customerId) throw new CoreError('not_found', 'SUBSCRIPTION_NOT_FOUND', 'Subscription not found');
  return view;
}

/** What a subscription change needs: the processors charge a plan change billed at once. */
export const subscriptionDepsOf = (deps: AppDeps) => ({ db: deps.db, clock: clockOf(deps), payments: deps.payments!, livePayments: deps.stripe?.processor ?? null, baseUrl: deps.baseUrl });

/** GET /portal/:slug/subscriptions/:id/cancel — the reason and comment form. */
export function showPortalCancel(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const view = await ownSubscription(deps, context.principal, String(req.params.id));
    if (view.subscription.cancelAtPeriodEnd || view.subscription.endedAt) return res.redirect(303, portalPath(context.organization.slug));
    const { customer } = view;
    const subscription = portalSubscriptionOf(view);
    sendPage(res, 200, <PortalCancelPage seller={context.organization.name} base={portalPath(context.organization.slug)} email={customer.email} subscription={subscription} />);
  };
}

const Reason = z.enum(CANCELLATION_REASONS).optional();

/**
 * POST /portal/:slug/subscriptions/:id/cancel and …/uncancel — through the seller's own cancel, as the portal API's
 * subscriptions.update, so subscription.updated with subscription.canceled (or .uncanceled) are emitted the same way.
 */
export function submitPortalCancel(deps: AppDeps, cancel: boolean): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const { organization, principal } = context;
    const id = String(req.params.id);
    await ownSubscription(deps, principal, id);
    const reasonField = fieldOf(req.body, 'reason');
    const reason = Reason.safeParse(reasonField === '' ? undefined : reasonField);
    if (!reason.success) return sendOverview(deps, res, 400, organization, principal, { error: 'Choose one of the reasons listed, or none.' });
    const comment = fieldOf(req.body, 'comment').trim().slice(0, 2000);
    const organizations = new Set([organization.id]);
    try {
      await updateSubscription(
        subscriptionDepsOf(deps),
        { read: organizations, write: organizations },
        id,
        cancel
          ? { kind: 'cancel', cancel_at_period_end: true, customer_cancellation_reason: reason.data ?? null, customer_cancellation_comment: comment || null }
          : { kind: 'cancel', cancel_at_period_end: false },
      );
    } catch (error) {
      if (!isCoreError(error) || error.kind === 'not_found') throw error;
      return sendOverview(deps, res, 409, organization, principal, { error: error.message });
    }
    res.redirect(303, `${portalPath(organization.slug)}?notice=${cancel ? 'canceled' : 'uncanceled'}`);
  };
}

/** GET /portal/:slug/orders/:id/invoice — the order's invoice PDF (generated on first ask, as the API's invoice link). */
export function showPortalInvoice(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const { organization, principal } = context;
    const organizations = new Set([organization.id]);
    const view = await getOrder(deps.db, organizations, String(req.params.id));
    if (view.order.customerId !== principal.customerId) throw new CoreError('not_found', 'ORDER_NOT_FOUND', 'Order not found');
    try {
      const secret = (await deps.auth.$context).secret;
      const { url } = await invoiceLink(deps.db, clockOf(deps), { read: organizations, write: organizations }, view.order.id, { baseUrl: deps.baseUrl, secret, now: clockOf(deps).now() });
      res.redirect(303, new URL(url).pathname + new URL(url).search);
    } catch (error) {
      if (!isCoreError(error) || error.kind === 'not_found') throw error;
      const message = error.code === 'MISSING_INVOICE_BILLING_DETAILS'
        ? `An invoice needs a billing name and address, which this order does not have. The receipt beside it shows the same payment; or ask ${organization.name} for an invoice.`
        : error.message;
      await sendOverview(deps, res, 409, organization, principal, { error: message });
    }
  };
}
