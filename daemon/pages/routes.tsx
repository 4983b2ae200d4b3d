import express, { Router } from 'express';
import type { AppDeps } from '../app.js';
import { linkProvider, revokeOtherSessions, revokeSession, showAccount, signOut, submitChangeEmail, submitDeleteAccount, submitNewOrganization, unlinkProvider } from './handlers/account.js';
import { decideDevice, showDevice } from './handlers/device.js';
import { home } from './handlers/home.js';
import { showEmailVerified, showForgotPassword, showResetPassword, submitForgotPassword, submitResetPassword } from './handlers/email.js';
import { decideInvitation, showInvitation } from './handlers/invitations.js';
import { showSignIn, startSocialSignIn, submitSignIn } from './handlers/sign-in.js';
import { showSignUp, submitSignUp } from './handlers/sign-up.js';
import { sameOriginForms } from './origin-guard.js';
import { allowProviderForms } from './social-csp.js';
import { pageErrorHandler } from './page-errors.js';
import { STYLESHEET_PATH, serveStylesheet } from './stylesheet.js';
import { FAVICON_PATH, serveFavicon } from './favicon.js';
import { checkoutPageRoutes } from './checkout/routes.js';
import { portalPageRoutes } from './portal/routes.js';
import { payLinkPageRoutes } from './pay/routes.js';
import { showSandboxAuthenticate, submitSandboxAuthenticate } from './sandbox-authenticate.js';
import { portalConnectRoutes } from './portal-connect.js';

/** The pages' forms are a few short fields; nothing near the API's body limit is needed. */
const FORM_BODY_LIMIT = 64 * 1024;

/** The server-rendered pages: sign up, sign in, device approval, account. */
export function pageRoutes(deps: AppDeps): Router {
  const router = Router();
  // Per route, not router-wide: other routers after this one must still see unread bodies.
  const form = [
    sameOriginForms(deps.baseUrl),
    express.urlencoded({ extended: false, limit: Math.min(deps.bodyLimit ?? FORM_BODY_LIMIT, FORM_BODY_LIMIT), parameterLimit: 20 }),
  ];

  router.get(STYLESHEET_PATH, serveStylesheet);
  router.get(FAVICON_PATH, serveFavicon);
  router.get('/', home(deps));
  // The sign-in, sign-up and account pages carry buttons whose form posts are redirected to a provider.
  router.use(['/sign-in', '/sign-up', '/account'], allowProviderForms(deps));
  router.get('/sign-in', showSignIn(deps));
  router.post('/sign-in', ...form, submitSignIn(deps));
  router.post('/sign-in/social', ...form, startSocialSignIn(deps));
  router.get('/sign-up', showSignUp(deps));
  router.post('/sign-up', ...form, submitSignUp(deps));
  router.post('/sign-out', ...form, signOut(deps));
  router.get('/device', showDevice(deps));
  router.post('/device/approve', ...form, decideDevice(deps, 'approve'));
  router.post('/device/deny', ...form, decideDevice(deps, 'deny'));
  router.get('/account', showAccount(deps));
  router.post('/account/sessions/revoke', ...form, revokeSession(deps));
  router.post('/account/sessions/revoke-others', ...form, revokeOtherSessions(deps));
  router.post('/account/accounts/link', ...form, linkProvider(deps));
  router.post('/account/accounts/unlink', ...form, unlinkProvider(deps));
  router.post('/account/email', ...form, submitChangeEmail(deps));
  router.post('/account/delete', ...form, submitDeleteAccount(deps));
  router.post('/account/organizations', ...form, submitNewOrganization(deps));
  router.get('/forgot-password', showForgotPassword());
  router.post('/forgot-password', ...form, submitForgotPassword(deps));
  router.get('/reset-password', showResetPassword(deps));
  router.post('/reset-password', ...form, submitResetPassword(deps));
  router.get('/email-verified', showEmailVerified(deps));
  router.get('/invitations/:id', showInvitation(deps));
  router.post('/invitations/:id/accept', ...form, decideInvitation(deps, 'accept'));
  router.post('/invitations/:id/reject', ...form, decideInvitation(deps, 'reject'));
  router.use(checkoutPageRoutes(deps));
  router.use(portalPageRoutes(deps));
  router.use(payLinkPageRoutes(deps));
  // The sandbox's 3-D Secure page (core/payments/sandbox.ts sends customers of sandbox payments there).
  router.get('/sandbox/authenticate/:intentId', showSandboxAuthenticate(deps));
  router.post('/sandbox/authenticate/:intentId', ...form, submitSandboxAuthenticate(deps));
  // Connecting a customer's GitHub or Discord account for a benefit (OAuth), from the customer portal.
  router.use(portalConnectRoutes(deps));
  router.use(pageErrorHandler);
  return router;
}
