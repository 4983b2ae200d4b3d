import type { Request, RequestHandler, Response } from 'express';
import type { AppDeps } from '../app.js';
import { settleIntentFromProcessor } from '../../core/billing/payments/settle.js';
import { systemClock } from '../../core/clock.js';
import type { PaymentProcessor } from '../../core/payments/processor.js';
import { isSandboxSetup, type SandboxProcessor } from '../../core/payments/sandbox.js';
import { sendPage } from './render.js';
import { CheckoutLayout } from './checkout/components/CheckoutLayout.js';
import { formatMoney } from './checkout/money.js';

const isSandboxProcessor = (processor: PaymentProcessor | undefined): processor is SandboxProcessor =>
  processor !== undefined && processor.name === 'sandbox' && typeof (processor as Partial<SandboxProcessor>).authenticate === 'function';

/**
 * Where an authentication ends: the intent's return URL (the hosted checkout), with Stripe's own query
 * parameters, so the checkout treats a return from the sandbox and from Stripe alike. Only tilld's own URLs.
 */
function returnTo(deps: AppDeps, returnUrl: string | null, intentId: string, status: string): string {
  const own = new URL(deps.baseUrl).origin;
  let target: URL;
  try {
    target = new URL(returnUrl ?? '/', deps.baseUrl);
  } catch {
    target = new URL('/', deps.baseUrl);
  }
  if (target.origin !== own) target = new URL('/', deps.baseUrl);
  // A card being saved (the portal's add-a-card) comes back as Stripe's SetupIntent return does.
  target.searchParams.set(isSandboxSetup(intentId) ? 'setup_intent' : 'payment_intent', intentId);
  target.searchParams.set('redirect_status', status === 'succeeded' ? 'succeeded' : status === 'failed' ? 'failed' : 'pending');
  return `${target.pathname}${target.search}`;
}

function notFound(res: Response): void {
  sendPage(
    res,
    404,
    <CheckoutLayout title="No such payment" mode="sandbox">
      <p>The sandbox knows no payment waiting for authentication here.</p>
    </CheckoutLayout>,
  );
}

const intentIdOf = (req: Request) => String(req.params.intentId);

/**
 * GET /sandbox/authenticate/:intentId: the sandbox's stand-in for a bank's 3-D Secure page. The customer completes
 * or fails the authentication with a button (plain form posts: no JavaScript needed).
 */
export function showSandboxAuthenticate(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    if (!isSandboxProcessor(deps.payments)) return notFound(res);
    const intent = await deps.payments.findIntent(intentIdOf(req));
    if (!intent) return notFound(res);
    if (intent.status !== 'requires_action') return res.redirect(303, returnTo(deps, intent.returnUrl, intent.id, intent.status));
    const action = `/sandbox/authenticate/${encodeURIComponent(intent.id)}`;
    sendPage(
      res,
      200,
      <CheckoutLayout title="Authenticate this payment" seller="Sandbox bank" mode="sandbox">
        {isSandboxSetup(intent.id) ? (
          <p data-testid="authenticate-amount">Your bank asks you to confirm saving this card for later payments.</p>
        ) : (
          <p data-testid="authenticate-amount">
            Your bank asks you to confirm a payment of <strong>{formatMoney(intent.amount, intent.currency)}</strong>.
          </p>
        )}
        <p className="muted small">This is the sandbox’s 3-D Secure test page: no bank is involved and no real money moves.</p>
        <form method="post" action={action} className="row">
          <button type="submit" name="outcome" value="complete" className="button">
            Complete authentication
          </button>
          <button type="submit" name="outcome" value="fail" className="button button-secondary">
            Fail authentication
          </button>
        </form>
      </CheckoutLayout>,
    );
  };
}

/** POST /sandbox/authenticate/:intentId: settles the intent as a processor's event would, then back to the checkout. */
export function submitSandboxAuthenticate(deps: AppDeps): RequestHandler {
  return async (req, res) => {
    if (!isSandboxProcessor(deps.payments)) return notFound(res);
    const outcome = (req.body as Record<string, unknown> | undefined)?.outcome;
    if (outcome !== 'complete' && outcome !== 'fail') return res.redirect(303, `/sandbox/authenticate/${encodeURIComponent(intentIdOf(req))}`);
    const answered = await deps.payments.authenticate(intentIdOf(req), outcome === 'complete');
    if (!answered) return notFound(res);
    const intent = (await deps.payments.findIntent(intentIdOf(req)))!;
    // A setup pays nothing: the customer's page asks the processor about it when they come back.
    if (isSandboxSetup(intent.id)) return res.redirect(303, returnTo(deps, intent.returnUrl, intent.id, answered.outcome.status));
    await settleIntentFromProcessor(
      { db: deps.db, clock: deps.clock ?? systemClock, payments: deps.payments, livePayments: deps.stripe?.processor ?? null, baseUrl: deps.baseUrl },
      { processor: 'sandbox', processorIntentId: intent.id, paymentId: answered.paymentId, outcome: answered.outcome },
    );
    res.redirect(303, returnTo(deps, intent.returnUrl, intent.id, answered.outcome.status));
  };
}
