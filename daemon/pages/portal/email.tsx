import type { Request, RequestHandler } from 'express';
import type { AppDeps } from '../../app.js';
import { checkEmailUpdate, requestEmailUpdate, verifyEmailUpdate, type EmailUpdateDeps } from '../../../core/billing/customer-sessions/email-update.js';
import { customersByIds } from '../../../core/billing/customers/repository.js';
import { isCoreError } from '../../../core/errors.js';
import { createMailer, DEFAULT_MAIL_FROM } from '../../../core/mail/mailer.js';
import { fieldOf } from '../forms.js';
import { sendPage } from '../render.js';
import { clockOf, organizationOf, signedIn } from './handlers.js';
import { portalPath, setPortalCookie } from './session.js';
import { PortalChangeEmailPage, PortalVerifyEmailPage } from './views/EmailPages.js';

const INVALID_LINK = 'This link is not valid any more: it was used, replaced by a newer one, or has expired. Ask for a new one from your account.';

async function emailDepsOf(deps: AppDeps): Promise<EmailUpdateDeps> {
  return { db: deps.db, clock: clockOf(deps), mailer: deps.mailer ?? createMailer(deps.db, { from: DEFAULT_MAIL_FROM }), secret: (await deps.auth.$context).secret, baseUrl: deps.baseUrl };
}

const emailOf = async (deps: AppDeps, customerId: string) => (await customersByIds(deps.db, [customerId])).get(customerId)!.email;
const tokenOf = (req: Request) => (typeof req.query.token === 'string' ? req.query.token : fieldOf(req.body, 'token'));

/** GET /portal/:slug/email — the new-address form (when the seller allows changes). */
export function showPortalEmail(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const { organization, principal } = context;
    const notice = req.query.notice === 'sent' ? 'Check the inbox of the new address: the link in the email confirms the change, within 30 minutes.' : undefined;
    const allowed = organization.settings.customer_portal_settings.customer.allow_email_change;
    sendPage(res, 200, <PortalChangeEmailPage seller={organization.name} base={portalPath(organization.slug)} email={await emailOf(deps, principal.customerId)} allowed={allowed} notice={notice} />);
  };
}

/** POST /portal/:slug/email — the portal API's requestEmailUpdate: a link is mailed to the new address. */
export function submitPortalEmailChange(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const { organization, principal } = context;
    const typed = fieldOf(req.body, 'email').trim();
    const base = portalPath(organization.slug);
    const allowed = organization.settings.customer_portal_settings.customer.allow_email_change;
    const again = async (status: number, problem: { error?: string; fieldError?: string }) =>
      sendPage(res, status, <PortalChangeEmailPage seller={organization.name} base={base} email={await emailOf(deps, principal.customerId)} allowed={allowed} typed={typed} {...problem} />);
    try {
      await requestEmailUpdate(await emailDepsOf(deps), principal, typed);
    } catch (error) {
      if (!isCoreError(error) || error.kind === 'unauthorized' || error.kind === 'not_found') throw error;
      if (error.kind === 'invalid') return again(400, { fieldError: error.message });
      return again(error.kind === 'rate_limited' ? 429 : 403, { error: error.message });
    }
    res.redirect(303, `${base}/email?notice=sent`);
  };
}

/** GET /portal/:slug/verify-email?token=… — the mailed link: asks to confirm (a GET changes nothing). */
export function showPortalVerifyEmail(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const organization = await organizationOf(deps, req, res);
    if (!organization) return;
    const token = tokenOf(req);
    const base = portalPath(organization.slug);
    try {
      const update = await checkEmailUpdate(await emailDepsOf(deps), token);
      if (update.organizationId !== organization.id) throw new Error('another organization');
      sendPage(res, 200, <PortalVerifyEmailPage seller={organization.name} base={base} token={token} newEmail={update.email} />);
    } catch {
      sendPage(res, 400, <PortalVerifyEmailPage seller={organization.name} base={base} token="" newEmail={null} error={INVALID_LINK} />);
    }
  };
}

/** POST /portal/:slug/verify-email — makes the change (once) and signs the browser in with the new session it answers. */
export function submitPortalVerifyEmail(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const organization = await organizationOf(deps, req, res);
    if (!organization) return;
    const base = portalPath(organization.slug);
    const token = tokenOf(req);
    const refuse = (message: string) => sendPage(res, 400, <PortalVerifyEmailPage seller={organization.name} base={base} token="" newEmail={null} error={message} />);
    try {
      // A link of another organization's customer does nothing here.
      if ((await checkEmailUpdate(await emailDepsOf(deps), token)).organizationId !== organization.id) return refuse(INVALID_LINK);
      const verified = await verifyEmailUpdate(await emailDepsOf(deps), token);
      setPortalCookie(deps, res, organization.slug, verified.token);
      res.redirect(303, `${base}?notice=email-changed`);
    } catch (error) {
      if (!isCoreError(error)) throw error;
      return refuse(error.kind === 'invalid' ? 'That email address is already used by another account, so it cannot be yours here.' : INVALID_LINK);
    }
  };
}
