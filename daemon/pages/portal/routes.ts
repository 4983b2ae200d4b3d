import express, { Router } from 'express';
import type { AppDeps } from '../../app.js';
import { sameOriginForms } from '../origin-guard.js';
import { PORTAL_SCRIPT_PATH, PORTAL_STYLESHEET_PATH, servePortalScript, servePortalStylesheet } from './assets.js';
import { deletePortalPaymentMethod, showPortalPaymentMethodReturn, showPortalPaymentMethods, submitPortalPaymentMethod } from './payment-methods.js';
import { showPortalEmail, showPortalVerifyEmail, submitPortalEmailChange, submitPortalVerifyEmail } from './email.js';
import { showPortalChangePlan, submitPortalChangePlan } from './plan-change.js';
import { showPortal, showPortalCancel, showPortalCode, showPortalInvoice, signOutOfPortal, submitPortalCancel, submitPortalCode, submitPortalEmail } from './handlers.js';

/** The portal's forms: an email, a code, a cancellation reason and comment, a plan, a card (or Stripe's token). */
const PORTAL_FORM_LIMIT = 16 * 1024;

/** The customer portal's pages at `/portal/:slug` (the customer_portal_url of a customer session). */
export function portalPageRoutes(deps: AppDeps): Router {
  const router = Router();
  const form = [sameOriginForms(deps.baseUrl), express.urlencoded({ extended: false, limit: Math.min(deps.bodyLimit ?? PORTAL_FORM_LIMIT, PORTAL_FORM_LIMIT), parameterLimit: 10 })];
  router.get(PORTAL_STYLESHEET_PATH, servePortalStylesheet);
  router.get(PORTAL_SCRIPT_PATH, servePortalScript);
  router.get('/portal/:slug', showPortal(deps));
  router.post('/portal/:slug/sign-in', ...form, submitPortalEmail(deps));
  router.get('/portal/:slug/sign-in/code', showPortalCode(deps));
  router.post('/portal/:slug/sign-in/code', ...form, submitPortalCode(deps));
  router.post('/portal/:slug/sign-out', ...form, signOutOfPortal(deps));
  router.get('/portal/:slug/subscriptions/:id/cancel', showPortalCancel(deps));
  router.post('/portal/:slug/subscriptions/:id/cancel', ...form, submitPortalCancel(deps, true));
  router.post('/portal/:slug/subscriptions/:id/uncancel', ...form, submitPortalCancel(deps, false));
  router.get('/portal/:slug/subscriptions/:id/change', showPortalChangePlan(deps));
  router.post('/portal/:slug/subscriptions/:id/change', ...form, submitPortalChangePlan(deps));
  router.get('/portal/:slug/orders/:id/invoice', showPortalInvoice(deps));
  router.get('/portal/:slug/email', showPortalEmail(deps));
  router.post('/portal/:slug/email', ...form, submitPortalEmailChange(deps));
  router.get('/portal/:slug/verify-email', showPortalVerifyEmail(deps));
  router.post('/portal/:slug/verify-email', ...form, submitPortalVerifyEmail(deps));
  router.get('/portal/:slug/payment-methods', showPortalPaymentMethods(deps));
  router.post('/portal/:slug/payment-methods', ...form, submitPortalPaymentMethod(deps));
  router.get('/portal/:slug/payment-methods/return', showPortalPaymentMethodReturn(deps));
  router.post('/portal/:slug/payment-methods/:id/delete', ...form, deletePortalPaymentMethod(deps));
  return router;
}
