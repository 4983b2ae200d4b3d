import express, { Router } from 'express';
import type { AppDeps } from '../../app.js';
import { sameOriginForms } from '../origin-guard.js';
import { showCheckout, showConfirmation, submitCheckout } from './handlers.js';
import { CHECKOUT_STYLESHEET_PATH, serveCheckoutStylesheet } from './stylesheet.js';
import { STRIPE_CHECKOUT_SCRIPT_PATH } from './components/PaymentFields.js';
import { serveStripeCheckoutScript } from './stripe-script.js';

/** The checkout form carries the contact, address, custom-field and card inputs: more than the account forms, still small. */
const CHECKOUT_FORM_LIMIT = 64 * 1024;
const CHECKOUT_FORM_FIELDS = 200;

/** The hosted checkout at the checkout's `url`: `/checkout/:clientSecret`, its form posts, and the confirmation. */
export function checkoutPageRoutes(deps: AppDeps): Router {
  const router = Router();
  const form = [
    sameOriginForms(deps.baseUrl),
    express.urlencoded({ extended: false, limit: Math.min(deps.bodyLimit ?? CHECKOUT_FORM_LIMIT, CHECKOUT_FORM_LIMIT), parameterLimit: CHECKOUT_FORM_FIELDS }),
  ];
  router.get(CHECKOUT_STYLESHEET_PATH, serveCheckoutStylesheet);
  router.get(STRIPE_CHECKOUT_SCRIPT_PATH, serveStripeCheckoutScript);
  router.get('/checkout/:clientSecret', showCheckout(deps));
  router.post('/checkout/:clientSecret', ...form, submitCheckout(deps));
  router.get('/checkout/:clientSecret/confirmation', showConfirmation(deps));
  return router;
}
