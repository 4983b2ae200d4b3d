import type { RequestHandler, Response } from 'express';
import type { AppDeps } from '../../app.js';
import { isCoreError } from '../../../core/errors.js';
import type { CustomerPrincipal } from '../../../core/billing/customer-sessions/service.js';
import { customerPlanOptions, previewCustomerPlanChange, updateCustomerSubscription } from '../../../core/billing/customer-sessions/subscription-update.js';
import type { Organization } from '../../../core/billing/organizations/schema.js';
import { fieldOf } from '../forms.js';
import { sendPage } from '../render.js';
import { portalSubscriptionOf } from './data.js';
import { clockOf, ownSubscription, signedIn, subscriptionDepsOf } from './handlers.js';
import { portalPath } from './session.js';
import { PortalChangePlanPage } from './views/ChangePlanPage.js';

/** A refusal the customer can act on (not allowed, not a plan, payment owed, card declined), shown on the page. */
const shown = (error: unknown): string => {
  if (!isCoreError(error) || error.kind === 'not_found') throw error;
  return error.message;
};

/**
 * The change-plan page: the plans the customer may pick, and for the picked one (`productId`) the prorated amounts
 * previewCustomerPlanChange computes, before anything changes.
 */
async function sendChangePlan(deps: AppDeps, res: Response, organization: Organization, principal: CustomerPrincipal, id: string, productId: string | undefined, status = 200, failure?: string) {
  const view = await ownSubscription(deps, principal, id);
  const { allowed, options } = await customerPlanOptions({ db: deps.db, clock: clockOf(deps) }, principal, id);
  const chosen = productId ? options.find((option) => option.productId === productId) : undefined;
  let preview;
  let error = failure;
  if (chosen && !failure) {
    try {
      preview = await previewCustomerPlanChange({ db: deps.db, clock: clockOf(deps) }, principal, id, chosen.productId);
    } catch (refused) {
      error = shown(refused);
      status = 409;
    }
  } else if (productId && !chosen && !failure) {
    error = 'Choose one of the plans listed.';
    status = 400;
  }
  sendPage(
    res,
    status,
    <PortalChangePlanPage
      seller={organization.name}
      base={portalPath(organization.slug)}
      email={view.customer.email}
      subscription={portalSubscriptionOf(view)}
      allowed={allowed}
      options={options}
      chosen={chosen}
      preview={preview}
      error={error}
    />,
  );
}

/** GET /portal/:slug/subscriptions/:id/change[?product_id=…] — pick a plan, then read what the change bills. */
export function showPortalChangePlan(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const productId = typeof req.query.product_id === 'string' && req.query.product_id ? req.query.product_id : undefined;
    await sendChangePlan(deps, res, context.organization, context.principal, String(req.params.id), productId);
  };
}

/**
 * POST /portal/:slug/subscriptions/:id/change `product_id` — the portal API's plan change (the seller's, with the
 * organization's proration behaviour), so subscription.updated (and, when billed at once, the order's events) are
 * emitted the same way. A refusal (a declined card among them) changes nothing and is shown on the page.
 */
export function submitPortalChangePlan(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    const context = await signedIn(deps, req, res);
    if (!context) return;
    const { organization, principal } = context;
    const id = String(req.params.id);
    const productId = fieldOf(req.body, 'product_id');
    try {
      await updateCustomerSubscription(subscriptionDepsOf(deps), principal, id, { kind: 'product', product_id: productId });
    } catch (error) {
      const message = shown(error);
      return sendChangePlan(deps, res, organization, principal, id, productId || undefined, isCoreError(error) && error.kind === 'payment_failed' ? 402 : 409, message);
    }
    res.redirect(303, `${portalPath(organization.slug)}?notice=plan-changed`);
  };
}
