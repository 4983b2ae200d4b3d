import type { FieldErrors } from '../../forms.js';
import type { PaymentModeName } from '../../../payment-mode.js';
import type { CheckoutWire } from '../types.js';
import { CardFields } from './CardFields.js';

/** Stripe.js, loaded from Stripe as Stripe requires (never bundled or self-hosted). */
export const STRIPE_JS_URL = 'https://js.stripe.com/v3';
/** The page's own script that mounts Stripe's Payment Element and makes the ConfirmationToken. */
export const STRIPE_CHECKOUT_SCRIPT_PATH = '/assets/stripe-checkout.js';

/**
 * How the card is taken, by the seller's payment mode: the sandbox's card inputs (test cards listed), Stripe's
 * Payment Element (card data goes from the browser to Stripe, never to tilld; it needs JavaScript), or a notice
 * that the seller cannot take payments.
 */
export function PaymentFields({ errors, mode, checkout, publishableKey }: { errors: FieldErrors; mode: PaymentModeName; checkout: CheckoutWire; publishableKey: string | null }) {
  if (mode === 'sandbox') return <CardFields errors={errors} sandbox />;
  if (mode === 'not_configured' || !publishableKey) {
    return (
      <div className="alert alert-error" role="alert" data-testid="payments-not-configured">
        <p>{checkout.organization.name} cannot take payments yet, so this checkout cannot be paid. Nothing was charged.</p>
      </div>
    );
  }
  return (
    <StripePaymentElement
      errors={errors}
      mode={mode}
      publishableKey={publishableKey}
      amount={checkout.total_amount}
      currency={checkout.currency}
      saveForLater={Boolean(checkout.product?.is_recurring)}
    />
  );
}

/**
 * Stripe's Payment Element and the script that turns it into a ConfirmationToken on "Pay" (a submit button
 * `intent=pay` of the surrounding form): the checkout's and the pay link's card input on a Stripe organization.
 */
export function StripePaymentElement({
  errors,
  mode,
  publishableKey,
  amount,
  currency,
  saveForLater,
}: {
  errors: FieldErrors;
  mode: PaymentModeName;
  publishableKey: string;
  amount: number;
  currency: string;
  saveForLater: boolean;
}) {
  const error = errors.confirmation_token_id ?? errors.card_number;
  return (
    <fieldset className="group" data-testid="stripe-payment">
      <legend>Payment</legend>
      <p className="muted small" data-testid="payment-mode">
        {mode === 'stripe_test' ? 'Stripe test mode: no real payment is made. ' : ''}Your card details go straight to Stripe, never to this site.
      </p>
      <noscript>
        <div className="alert alert-error" role="alert" data-testid="javascript-needed">
          <p>JavaScript is needed to pay here: your card is entered in Stripe’s secure form, which runs only with JavaScript. Turn JavaScript on and reload this page.</p>
        </div>
      </noscript>
      <div
        id="payment-element"
        data-publishable-key={publishableKey}
        data-amount={String(amount)}
        data-currency={currency}
        data-setup-future-usage={saveForLater ? 'off_session' : undefined}
      />
      <input type="hidden" name="confirmation_token_id" id="confirmation-token-id" />
      {error ? (
        <p className="field-error" id="field-confirmation_token_id" role="alert">
          {error}
        </p>
      ) : null}
      <script src={STRIPE_JS_URL} />
      <script src={STRIPE_CHECKOUT_SCRIPT_PATH} defer />
    </fieldset>
  );
}
