import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../../app.js';
import { authFailure, callAuth } from '../auth-calls.js';
import { authFormErrors } from '../auth-errors.js';
import { captchaHeaders, captchaProvider } from '../captcha.js';
import { fieldOf, parseForm, type FormErrors } from '../forms.js';
import { sendPage } from '../render.js';
import { safeNext, withNext } from '../safe-next.js';
import { providerFailure, socialErrorMessage } from '../social-errors.js';
import { SignInPage } from '../views/SignInPage.js';
import { signInProviders } from '../../../core/auth/social.js';

/** The one field takes an email address or a username; it keeps the name `email` so password managers fill it. */
export const SignInForm = z.object({
  email: z.string().trim().min(1, 'Enter your email address or username.').max(254, 'That email address is too long.'),
  password: z.string().min(1, 'Enter your password.'),
});

/** Username rules Better Auth checks before looking an account up; their messages belong on the field. */
const USERNAME_CODES = new Set(['USERNAME_TOO_SHORT', 'USERNAME_TOO_LONG', 'INVALID_USERNAME']);

/** An email address always has an '@' and a username never does, so the value says which sign-in it is. */
function signInCall(login: string, password: string) {
  return login.includes('@')
    ? { path: '/sign-in/email', body: { email: login, password } }
    : { path: '/sign-in/username', body: { username: login, password } };
}

/** Fixed texts only: a notice named in the URL never reflects what the URL says. */
const NOTICES: Record<string, string> = {
  'signed-out': 'You have signed out.',
  'password-reset': 'Your password was changed. Sign in with the new one.',
  'account-deleted': 'Your account was deleted.',
};

/** Said when /device sent the browser here: why a sign-in is asked for before anything else. */
const DEVICE_NOTICE = 'Sign in to approve the device: a program such as `till login` asked to use your account, and you confirm its code once you are signed in.';

const isDevicePath = (next: string) => next === '/device' || next.startsWith('/device?');

/** GET /sign-in: the form, and a button per configured provider. `?error=` is a failed provider sign-in (from Better Auth's callback). */
export function showSignIn(deps: AppDeps): RequestHandler {
  return (req, res) => {
    const next = safeNext(req.query.next);
    const notice = (typeof req.query.notice === 'string' ? NOTICES[req.query.notice] : undefined) ?? (isDevicePath(next) ? DEVICE_NOTICE : undefined);
    const providerError = socialErrorMessage(req.query.error);
    sendPage(
      res,
      200,
      <SignInPage
        next={next}
        captchaProvider={captchaProvider(deps)}
        notice={notice}
        providers={signInProviders(deps.auth.options)}
        errors={providerError ? { form: providerError } : undefined}
      />,
    );
  };
}

/**
 * POST /sign-in/social: a plain form post (no script needed) that asks Better Auth for the provider's
 * authorization URL and sends the browser there. Better Auth's callback then signs in and goes on to
 * `next`, or comes back to /sign-in with `?error=`.
 */
export function startSocialSignIn(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const next = safeNext(fieldOf(req.body, 'next'));
    const reply = await callAuth(deps, req, res, {
      method: 'POST',
      path: '/sign-in/social',
      body: { provider: fieldOf(req.body, 'provider'), callbackURL: next, errorCallbackURL: withNext('/sign-in', next), disableRedirect: true },
    });
    const url = (reply.body as { url?: unknown } | null)?.url;
    if (reply.status === 200 && typeof url === 'string') return res.redirect(303, url);
    const providers = signInProviders(deps.auth.options);
    const failure = providerFailure(authFailure(reply), fieldOf(req.body, 'provider'), providers);
    sendPage(
      res,
      reply.status === 200 ? 502 : failure.status,
      <SignInPage next={next} captchaProvider={captchaProvider(deps)} providers={providers} errors={{ form: failure.message }} />,
    );
  };
}

/** POST /sign-in: Better Auth signs in and sets the cookie; a refusal shows the form again with its message. */
export function submitSignIn(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const next = safeNext(fieldOf(req.body, 'next'));
    const email = fieldOf(req.body, 'email').trim();
    const again = (status: number, errors: FormErrors) =>
      sendPage(res, status, <SignInPage email={email} next={next} errors={errors} captchaProvider={captchaProvider(deps)} providers={signInProviders(deps.auth.options)} />);

    const form = parseForm(SignInForm, req.body);
    if (!form.ok) return again(400, { fields: form.errors });
    const reply = await callAuth(deps, req, res, {
      method: 'POST',
      ...signInCall(form.data.email, form.data.password),
      headers: captchaHeaders(req.body),
    });
    if (reply.status !== 200) {
      const failure = authFailure(reply);
      if (USERNAME_CODES.has(failure.code)) return again(reply.status, { fields: { email: failure.message } });
      return again(reply.status, authFormErrors(failure));
    }
    res.redirect(303, next);
  };
}
