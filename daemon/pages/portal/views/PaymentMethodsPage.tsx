import { Alert } from '../../components/Alert.js';
import { PostButton } from '../../components/PostButton.js';
import type { FieldErrors } from '../../forms.js';
import type { PaymentModeName } from '../../../payment-mode.js';
import { CardFields } from '../../checkout/components/CardFields.js';
import { StripePaymentElement } from '../../checkout/components/PaymentFields.js';
import { PortalLayout } from './PortalLayout.js';

export interface PortalCard {
  id: string;
  brand: string;
  last4: string;
  expMonth: number | null;
  expYear: number | null;
  /** The newest card: the one renewals charge when a subscription names none. */
  isDefault: boolean;
}

export interface PaymentMethodsProps {
  seller: string;
  base: string;
  email: string;
  cards: PortalCard[];
  mode: PaymentModeName;
  publishableKey: string | null;
  notice?: string;
  errors?: { form?: string; fields?: FieldErrors };
}

const brandName = (brand: string) => (brand ? brand[0]!.toUpperCase() + brand.slice(1) : 'Card');
const expiry = (card: PortalCard) => (card.expMonth && card.expYear ? ` · expires ${String(card.expMonth).padStart(2, '0')}/${card.expYear}` : '');

/**
 * The customer's saved cards and a form to add one, which becomes the card of their subscriptions: the sandbox's
 * card inputs (a plain form post), or Stripe's Payment Element (JavaScript, card data straight to Stripe).
 */
export function PortalPaymentMethodsPage({ seller, base, email, cards, mode, publishableKey, notice, errors }: PaymentMethodsProps) {
  const canAdd = mode === 'sandbox' || (mode !== 'not_configured' && publishableKey !== null);
  return (
    <PortalLayout title="Payment methods" seller={seller} base={base} email={email}>
      {notice ? <Alert kind="success">{notice}</Alert> : null}
      {errors?.form ? (
        <Alert kind="error" id="form-error">
          {errors.form}
        </Alert>
      ) : null}
      <section className="portal-section" aria-labelledby="saved-cards">
        <h2 id="saved-cards">Saved cards</h2>
        {cards.length ? (
          <ul className="plain">
            {cards.map((card) => (
              <li key={card.id} className="portal-card" data-testid="saved-card">
                <p>
                  {brandName(card.brand)} ending in {card.last4}
                  {expiry(card)}
                  {card.isDefault ? <strong> · charged for your subscriptions</strong> : null}
                </p>
                <PostButton action={`${base}/payment-methods/${encodeURIComponent(card.id)}/delete`} label="Remove" variant="link" />
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">No saved cards.</p>
        )}
      </section>
      <section className="portal-section" aria-labelledby="add-card">
        <h2 id="add-card">Add a card</h2>
        {canAdd ? (
          <form method="post" action={`${base}/payment-methods`} className="card" noValidate aria-describedby={errors?.form ? 'form-error' : undefined}>
            {mode === 'sandbox' ? (
              <CardFields errors={errors?.fields ?? {}} sandbox />
            ) : (
              <StripePaymentElement errors={errors?.fields ?? {}} mode={mode} publishableKey={publishableKey!} amount={0} currency="usd" saveForLater />
            )}
            <p className="muted small">The new card is charged for your subscriptions from their next payment on. Nothing is charged now.</p>
            <button type="submit" name="intent" value="pay" className="button" data-pay>
              Save card
            </button>
          </form>
        ) : (
          <Alert kind="error">{seller} cannot take cards at the moment.</Alert>
        )}
      </section>
      <p>
        <a href={base}>Back to your account</a>
      </p>
    </PortalLayout>
  );
}
