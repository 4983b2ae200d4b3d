import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../../app.js';
import { authFailure, callAuth } from '../auth-calls.js';
import { fieldOf, parseForm } from '../forms.js';
import { sendPage } from '../render.js';
import { currentSession } from '../session.js';
import { ForgotPasswordPage, NoticePage, ResetPasswordPage } from '../views/EmailPages.js';

const ForgotForm = z.object({
  email: z.string().trim().min(1, 'Enter your email address.').max(254, 'That email address is too long.'),
});

const minPasswordLength = (deps: AppDeps) => (deps.auth.options.emailAndPassword as { minPasswordLength?: number }).minPasswordLength ?? 8;

/** GET /forgot-password. */
export function showForgotPassword(): RequestHandler {
  return (_req, res) => sendPage(res, 200, <ForgotPasswordPage />);
}

/**
 * POST /forgot-password: Better Auth mails a reset link when the address has an account. The answer is the
 * same either way, so the form does not tell strangers which addresses have accounts.
 */
export function submitForgotPassword(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const form = parseForm(ForgotForm, req.body);
    if (!form.ok) return sendPage(res, 400, <ForgotPasswordPage email={fieldOf(req.body, 'email')} errors={{ fields: form.errors }} />);
    const reply = await callAuth(deps, req, res, { method: 'POST', path: '/request-password-reset', body: { email: form.data.email, redirectTo: '/reset-password' } });
    if (reply.status !== 200) {
      const failure = authFailure(reply);
      return sendPage(res, reply.status, <ForgotPasswordPage email={form.data.email} errors={failure.code === 'INVALID_EMAIL' ? { fields: { email: failure.message } } : { form: failure.message }} />);
    }
    sendPage(
      res,
      200,
      <NoticePage
        title="Check your email"
        kind="info"
        message={`If ${form.data.email} belongs to an account, a link to choose a new password is on its way. It works once, within an hour.`}
        links={[{ href: '/sign-in', label: 'Back to sign in' }]}
      />,
    );
  };
}

/** GET /reset-password?token=…: the form; a visit without a token is sent to ask for a link. */
export function showResetPassword(deps: AppDeps): RequestHandler {
  return (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    // Better Auth's own /reset-password/:token redirect reports a bad link as ?error=INVALID_TOKEN.
    if (!token || typeof req.query.error === 'string') {
      return sendPage(
        res,
        400,
        <NoticePage title="Reset link not valid" kind="error" message="This password reset link is invalid or has expired." links={[{ href: '/forgot-password', label: 'Ask for a new link' }]} />,
      );
    }
    sendPage(res, 200, <ResetPasswordPage token={token} minPasswordLength={minPasswordLength(deps)} />);
  };
}

const PASSWORD_CODES = new Set(['PASSWORD_TOO_SHORT', 'PASSWORD_TOO_LONG']);

/** POST /reset-password: sets the new password with the mailed token, which works once. */
export function submitResetPassword(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const token = fieldOf(req.body, 'token');
    const password = fieldOf(req.body, 'password');
    const again = (status: number, errors: { form?: string; fields?: Record<string, string> }) =>
      sendPage(res, status, <ResetPasswordPage token={token} errors={errors} minPasswordLength={minPasswordLength(deps)} />);
    if (!password) return again(400, { fields: { password: 'Choose a new password.' } });
    const reply = await callAuth(deps, req, res, { method: 'POST', path: '/reset-password', body: { newPassword: password, token } });
    if (reply.status !== 200) {
      const failure = authFailure(reply);
      if (PASSWORD_CODES.has(failure.code)) return again(reply.status, { fields: { password: failure.message } });
      return sendPage(
        res,
        reply.status,
        <NoticePage title="Reset link not valid" kind="error" message={`${failure.message}: the link is invalid, expired or already used.`} links={[{ href: '/forgot-password', label: 'Ask for a new link' }]} />,
      );
    }
    res.redirect(303, '/sign-in?notice=password-reset');
  };
}

/** Better Auth's verify-email redirect errors, in words. */
const VERIFY_ERRORS: Record<string, string> = {
  INVALID_TOKEN: 'This verification link is invalid or has already been used.',
  TOKEN_EXPIRED: 'This verification link has expired. Sign in to get a new one.',
  USER_NOT_FOUND: 'The account this link was for no longer exists.',
};

/** GET /email-verified: where Better Auth's verify-email link lands, with ?error= when it did not work. */
export function showEmailVerified(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const signedIn = await currentSession(deps, req, res);
    const error = typeof req.query.error === 'string' ? req.query.error : undefined;
    if (error) {
      return sendPage(
        res,
        400,
        <NoticePage
          title="Email not verified"
          kind="error"
          message={VERIFY_ERRORS[error] ?? 'This verification link did not work.'}
          links={[{ href: signedIn ? '/account' : '/sign-in', label: signedIn ? 'Your account' : 'Sign in' }]}
          user={signedIn?.user}
        />,
      );
    }
    sendPage(
      res,
      200,
      <NoticePage
        title="Email verified"
        kind="success"
        message={signedIn ? `Thank you: ${signedIn.user.email} is verified.` : 'Thank you: your email address is verified.'}
        links={[{ href: signedIn ? '/account' : '/sign-in', label: signedIn ? 'Go to your account' : 'Sign in' }]}
        user={signedIn?.user}
      />,
    );
  };
}
