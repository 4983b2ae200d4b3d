import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../../app.js';
import { authFailure, callAuth } from '../auth-calls.js';
import { authFormErrors } from '../auth-errors.js';
import { captchaHeaders, captchaProvider } from '../captcha.js';
import { fieldOf, parseForm, type FormErrors } from '../forms.js';
import { sendPage } from '../render.js';
import { NoticePage } from '../views/EmailPages.js';
import { safeNext } from '../safe-next.js';
import { SignUpPage } from '../views/SignUpPage.js';
import { signInProviders } from '../../../core/auth/social.js';

export const SignUpForm = z.object({
  name: z.string().trim().min(1, 'Enter your name.').max(200, 'Use at most 200 characters.'),
  email: z.string().trim().min(1, 'Enter your email address.').max(254, 'That email address is too long.').pipe(z.email('Enter an email address, like you@example.com.')),
  // Optional; its rules (length, characters, not taken) are Better Auth's, and so are its messages.
  username: z.string().trim(),
  // Length rules are Better Auth's; its message is shown when they are not met.
  password: z.string().min(1, 'Choose a password.'),
});

/** Better Auth's username refusals, shown on the username field. */
const USERNAME_CODES = new Set(['USERNAME_IS_ALREADY_TAKEN', 'USERNAME_TOO_SHORT', 'USERNAME_TOO_LONG', 'INVALID_USERNAME', 'INVALID_DISPLAY_USERNAME']);

const DEFAULT_MIN_PASSWORD_LENGTH = 8;

const minPasswordLength = (deps: AppDeps) =>
  (deps.auth.options.emailAndPassword as { minPasswordLength?: number }).minPasswordLength ?? DEFAULT_MIN_PASSWORD_LENGTH;

/** GET /sign-up: the form, and the same provider buttons as /sign-in (their handler is /sign-in/social's). */
export function showSignUp(deps: AppDeps): RequestHandler {
  return (req, res) => {
    sendPage(
      res,
      200,
      <SignUpPage
        next={safeNext(req.query.next)}
        minPasswordLength={minPasswordLength(deps)}
        captchaProvider={captchaProvider(deps)}
        providers={signInProviders(deps.auth.options)}
      />,
    );
  };
}

/** POST /sign-up: Better Auth creates the account and signs it in; a refusal shows the form again. */
export function submitSignUp(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const next = safeNext(fieldOf(req.body, 'next'));
    const typed = { name: fieldOf(req.body, 'name').trim(), email: fieldOf(req.body, 'email').trim(), username: fieldOf(req.body, 'username').trim() };
    const again = (status: number, errors: FormErrors) =>
      sendPage(
        res,
        status,
        <SignUpPage
          {...typed}
          next={next}
          errors={errors}
          minPasswordLength={minPasswordLength(deps)}
          captchaProvider={captchaProvider(deps)}
          providers={signInProviders(deps.auth.options)}
        />,
      );

    const form = parseForm(SignUpForm, req.body);
    if (!form.ok) return again(400, { fields: form.errors });
    const { username, ...account } = form.data;
    const reply = await callAuth(deps, req, res, {
      method: 'POST',
      path: '/sign-up/email',
      // Better Auth keeps the username as typed for display and stores it lowercased.
      body: username ? { ...account, username } : account,
      headers: captchaHeaders(req.body),
    });
    if (reply.status !== 200) {
      const failure = authFailure(reply);
      if (USERNAME_CODES.has(failure.code)) return again(reply.status, { fields: { username: failure.message } });
      return again(reply.status, authFormErrors(failure));
    }
    // TILL_REQUIRE_EMAIL_VERIFICATION: the account exists but has no session until the mailed link is followed.
    if ((reply.body as { token?: unknown } | null)?.token == null) {
      return sendPage(
        res,
        200,
        <NoticePage
          title="Check your email"
          kind="info"
          message={`We sent a link to ${account.email}. Follow it to verify your email address, then sign in.`}
          links={[{ href: '/sign-in', label: 'Sign in' }]}
        />,
      );
    }
    res.redirect(303, next);
  };
}
