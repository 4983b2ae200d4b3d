import express, { Router } from 'express';
import type { AppDeps } from '../../app.js';
import { sameOriginForms } from '../origin-guard.js';
import { showPayLink, showPayReturn, submitPayLink } from './handlers.js';

/** The card form is three inputs (or Stripe's token) and a button. */
const PAY_FORM_LIMIT = 8 * 1024;

/** The pay-link page mailed after a declined renewal: `/pay/:token`, its form post, and the return from the bank. */
export function payLinkPageRoutes(deps: AppDeps): Router {
  const router = Router();
  const form = [sameOriginForms(deps.baseUrl), express.urlencoded({ extended: false, limit: PAY_FORM_LIMIT, parameterLimit: 20 })];
  router.get('/pay/return/:paymentId', showPayReturn(deps));
  router.get('/pay/:token', showPayLink(deps));
  router.post('/pay/:token', ...form, submitPayLink(deps));
  return router;
}
