import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../../app.js';
import { CREDENTIAL_PROVIDER_ID, signInProviders } from '../../../core/auth/social.js';
import { listLinkedAccounts, listMemberships, listSessions } from '../account-data.js';
import { authFailure, authHeaders, callAuth, forwardCookies } from '../auth-calls.js';
import { fieldOf, parseForm, type FieldErrors, type FormErrors } from '../forms.js';
import { createOrganization } from '../../../core/billing/organizations/service.js';
import { OrganizationName, OrganizationSlug } from '../../../core/billing/organizations/slug.js';
import { systemClock } from '../../../core/clock.js';
import { isCoreError, type CoreError } from '../../../core/errors.js';
import { sendPage } from '../render.js';
import { currentSession, signInUrl, type SignedIn } from '../session.js';
import { providerFailure, socialErrorMessage } from '../social-errors.js';
import { AccountPage, type AccountPageProps } from '../views/AccountPage.js';

/** Fixed texts for `?notice=`: what the last action did. */
const NOTICES: Record<string, NonNullable<AccountPageProps['notice']>> = {
  'session-revoked': { kind: 'success', message: 'The session was revoked; that device is signed out.' },
  'others-revoked': { kind: 'success', message: 'All your other sessions were revoked.' },
  'session-not-found': { kind: 'error', message: 'That session no longer exists.' },
  'sign-in-again': { kind: 'info', message: 'Sign in again to manage your sessions.' },
  'account-linked': { kind: 'success', message: 'The account was linked: you can now sign in with it.' },
  'account-unlinked': { kind: 'success', message: 'The sign-in method was removed.' },
  'email-change-sent': {
    kind: 'info',
    message: 'Check your email: a link to confirm the change is on its way. Your address changes once the new one is verified.',
  },
  'organization-created': { kind: 'success', message: 'The organization was created; you are its owner.' },
  'delete-link-sent': { kind: 'info', message: 'Check your email: your account is deleted when you follow the link we sent.' },
};

type AccountExtras = Pick<AccountPageProps, 'notice' | 'emailForm' | 'deleteForm' | 'organizationForm'>;

/** Renders /account for `signedIn`, with a notice or a form's errors. */
async function renderAccount(deps: AppDeps, req: Request, res: Response, signedIn: SignedIn, status: number, extras: AccountExtras = {}) {
  const [sessions, memberships, accounts] = await Promise.all([
    listSessions(deps, req, signedIn.sessionId),
    listMemberships(deps, req),
    listLinkedAccounts(deps, req),
  ]);
  sendPage(
    res,
    status,
    <AccountPage
      user={signedIn.user}
      sessions={sessions.stale ? null : sessions.sessions}
      memberships={memberships}
      accounts={accounts}
      providers={signInProviders(deps.auth.options)}
      {...extras}
    />,
  );
}

/** GET /account: who you are, your sessions, sign-in methods and organizations. `?error=` is a failed link (from Better Auth's callback). */
export function showAccount(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const linkError = socialErrorMessage(req.query.error);
    const notice = linkError ? ({ kind: 'error', message: linkError } as const) : typeof req.query.notice === 'string' ? NOTICES[req.query.notice] : undefined;
    await renderAccount(deps, req, res, signedIn, 200, { notice });
  };
}

/** POST /account/accounts/link: off to the provider; Better Auth's callback links the account and comes back. */
export function linkProvider(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const reply = await callAuth(deps, req, res, {
      method: 'POST',
      path: '/link-social',
      body: { provider: fieldOf(req.body, 'provider'), callbackURL: '/account?notice=account-linked', errorCallbackURL: '/account', disableRedirect: true },
    });
    const url = (reply.body as { url?: unknown } | null)?.url;
    if (reply.status === 200 && typeof url === 'string') return res.redirect(303, url);
    if (reply.status === 401) return res.redirect(303, signInUrl('/account'));
    const failure = providerFailure(authFailure(reply), fieldOf(req.body, 'provider'), signInProviders(deps.auth.options));
    await renderAccount(deps, req, res, signedIn, reply.status === 200 ? 502 : failure.status, { notice: { kind: 'error', message: failure.message } });
  };
}

/** POST /account/accounts/unlink: removes a sign-in method; Better Auth refuses the last one (FAILED_TO_UNLINK_LAST_ACCOUNT). */
export function unlinkProvider(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const reply = await callAuth(deps, req, res, { method: 'POST', path: '/unlink-account', body: { accountId: fieldOf(req.body, 'account_id') } });
    if (reply.status === 200) return res.redirect(303, '/account?notice=account-unlinked');
    if (reply.status === 401) return res.redirect(303, signInUrl('/account'));
    const failure = authFailure(reply);
    // SPEC §8: a stale session is told to sign in again before a sensitive change.
    const message = failure.code === 'SESSION_NOT_FRESH' ? `${failure.message}: sign in again to change your sign-in methods.` : failure.message;
    await renderAccount(deps, req, res, signedIn, reply.status, { notice: { kind: 'error', message } });
  };
}

export const ChangeEmailForm = z.object({
  newEmail: z.string().trim().min(1, 'Enter the new email address.').max(254, 'That email address is too long.').pipe(z.email('Enter an email address, like you@example.com.')),
});

/** POST /account/email: Better Auth mails a link to confirm the change; nothing changes until it is followed. */
export function submitChangeEmail(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const value = fieldOf(req.body, 'newEmail').trim();
    const form = parseForm(ChangeEmailForm, req.body);
    if (!form.ok) return renderAccount(deps, req, res, signedIn, 400, { emailForm: { value, errors: { fields: form.errors } } });
    const reply = await callAuth(deps, req, res, { method: 'POST', path: '/change-email', body: { newEmail: form.data.newEmail, callbackURL: '/account' } });
    if (reply.status === 200) return res.redirect(303, '/account?notice=email-change-sent');
    if (reply.status === 401) return res.redirect(303, signInUrl('/account'));
    const failure = authFailure(reply);
    // Better Auth sends "Email is the same" without a code.
    const onField = failure.code === 'INVALID_EMAIL' || failure.code === 'VALIDATION_ERROR' || failure.message === 'Email is the same';
    await renderAccount(deps, req, res, signedIn, reply.status, {
      emailForm: { value, errors: onField ? { fields: { newEmail: failure.message } } : { form: failure.message } },
    });
  };
}

export const NewOrganizationForm = z.object({
  name: OrganizationName,
  // Left empty, the slug is derived from the name.
  slug: z.string().trim().transform((slug) => slug || undefined).pipe(OrganizationSlug.optional()),
});

/** POST /account/organizations: the same service as POST /v1/organizations; the creator becomes its owner. */
export function submitNewOrganization(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const values = { name: fieldOf(req.body, 'name'), slug: fieldOf(req.body, 'slug') };
    const form = parseForm(NewOrganizationForm, req.body);
    if (!form.ok) return renderAccount(deps, req, res, signedIn, 400, { organizationForm: { values, errors: { fields: form.errors } } });
    try {
      await createOrganization(deps.db, deps.clock ?? systemClock, signedIn.user.id, form.data);
    } catch (error) {
      if (!isCoreError(error) || error.kind !== 'invalid') throw error;
      return renderAccount(deps, req, res, signedIn, 400, { organizationForm: { values, errors: formErrorsOf(error) } });
    }
    res.redirect(303, '/account?notice=organization-created');
  };
}

/** A service's validation failure as form errors: each issue beside the field it names. */
function formErrorsOf(error: CoreError): FormErrors {
  const fields: FieldErrors = {};
  const issues = Array.isArray(error.details) ? (error.details as { loc?: unknown[]; msg?: string }[]) : [];
  for (const issue of issues) {
    const field = issue.loc?.[1];
    if (typeof field === 'string' && issue.msg) fields[field] ??= issue.msg;
  }
  return Object.keys(fields).length > 0 ? { fields } : { form: error.message };
}

/**
 * POST /account/delete: with the password the account goes at once (and the browser is signed out); an
 * account without a password is sent a link to confirm by email (SPEC §8 delete-user rule).
 */
export function submitDeleteAccount(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const accounts = await listLinkedAccounts(deps, req);
    const hasPassword = accounts.some((account) => account.providerId === CREDENTIAL_PROVIDER_ID);
    const password = fieldOf(req.body, 'password');
    if (hasPassword && !password) return renderAccount(deps, req, res, signedIn, 400, { deleteForm: { errors: { fields: { password: 'Enter your password to delete your account.' } } } });
    const reply = await callAuth(deps, req, res, {
      method: 'POST',
      path: '/delete-user',
      body: hasPassword ? { password } : { callbackURL: '/sign-in?notice=account-deleted' },
    });
    if (reply.status === 200) {
      const deleted = (reply.body as { message?: unknown } | null)?.message !== 'Verification email sent';
      return res.redirect(303, deleted ? '/sign-in?notice=account-deleted' : '/account?notice=delete-link-sent');
    }
    if (reply.status === 401) return res.redirect(303, signInUrl('/account'));
    const failure = authFailure(reply);
    await renderAccount(deps, req, res, signedIn, reply.status, {
      deleteForm: { errors: failure.code === 'INVALID_PASSWORD' ? { fields: { password: failure.message } } : { form: failure.message } },
    });
  };
}

/** POST /account/sessions/revoke: ends one of the user's sessions, found by id (revoke-session takes a session's id). */
export function revokeSession(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const list = await listSessions(deps, req, signedIn.sessionId);
    if (list.stale) return res.redirect(303, '/account?notice=sign-in-again');
    const target = list.sessions.find((session) => session.id === fieldOf(req.body, 'session_id'));
    if (!target) return res.redirect(303, '/account?notice=session-not-found');
    const { headers } = await deps.auth.api.revokeSession({ headers: authHeaders(req), body: { token: target.id }, returnHeaders: true });
    forwardCookies(headers, res);
    res.redirect(303, target.current ? '/sign-in?notice=signed-out' : '/account?notice=session-revoked');
  };
}

/** POST /account/sessions/revoke-others: signs out every other device. */
export function revokeOtherSessions(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    if (!signedIn) return res.redirect(303, signInUrl('/account'));
    const { headers } = await deps.auth.api.revokeOtherSessions({ headers: authHeaders(req), returnHeaders: true });
    forwardCookies(headers, res);
    res.redirect(303, '/account?notice=others-revoked');
  };
}

/** POST /sign-out: ends this session and clears its cookies. */
export function signOut(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const { headers } = await deps.auth.api.signOut({ headers: authHeaders(req), returnHeaders: true });
    forwardCookies(headers, res);
    res.redirect(303, '/sign-in?notice=signed-out');
  };
}
