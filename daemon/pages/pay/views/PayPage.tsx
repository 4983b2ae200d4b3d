import { Fragment } from 'react';
import { Alert } from '../../components/Alert.js';
import type { FieldErrors } from '../../forms.js';
import type { PaymentModeName } from '../../../payment-mode.js';
import { CardFields } from '../../checkout/components/CardFields.js';
import { CheckoutLayout } from '../../checkout/components/CheckoutLayout.js';
import { StripePaymentElement } from '../../checkout/components/PaymentFields.js';
import { formatMoney } from '../../checkout/money.js';

/** What the pay page shows of the owed renewal (core/billing/pay-links: PayLinkView, as the page needs it). */
export interface OwedRenewal {
  sellerName: string;
  productName: string;
  customerEmail: string;
  amount: number;
  currency: string;
  /** The order's lines ("Pro plan", "API calls: 40 units"). */
  lines: { label: string; amount: number }[];
  invoiceNumber: string;
  expiresAt: Date;
}

const day = (date: Date) => date.toISOString().slice(0, 16).replace('T', ' ');

function Summary({ owed }: { owed: OwedRenewal }) {
  return (
    <div className="card">
      <dl className="facts">
        <dt>For</dt>
        <dd data-testid="owed-product">{owed.productName}</dd>
        <dt>Invoice</dt>
        <dd>{owed.invoiceNumber}</dd>
        <dt>Customer</dt>
        <dd>{owed.customerEmail}</dd>
        {owed.lines.map((line, i) => (
          <Fragment key={i}>
            <dt>{line.label}</dt>
            <dd>{formatMoney(line.amount, owed.currency)}</dd>
          </Fragment>
        ))}
        <dt>Amount due</dt>
        <dd data-testid="owed-amount">
          <strong>{formatMoney(owed.amount, owed.currency)}</strong>
        </dd>
      </dl>
    </div>
  );
}

export interface PayPageProps {
  owed: OwedRenewal;
  mode: PaymentModeName;
  publishableKey: string | null;
  action: string;
  errors?: { form?: string; fields?: FieldErrors };
}

/** The page a pay link opens while the renewal is owed: what is owed, and the card form (sandbox) or Stripe's. */
export function PayPage({ owed, mode, publishableKey, action, errors }: PayPageProps) {
  const fields = errors?.fields ?? {};
  const canPay = mode === 'sandbox' || (mode !== 'not_configured' && publishableKey !== null);
  return (
    <CheckoutLayout title={`Pay your ${owed.productName} renewal`} seller={owed.sellerName} mode={mode}>
      {errors?.form ? (
        <Alert kind="error" id="form-error">
          {errors.form}
        </Alert>
      ) : null}
      <p>
        Your subscription is past due: the last attempt to charge your saved card did not go through. Pay it here to keep it running. This link works until {day(owed.expiresAt)} UTC.
      </p>
      <Summary owed={owed} />
      {canPay ? (
        <form method="post" action={action} className="card" noValidate aria-describedby={errors?.form ? 'form-error' : undefined}>
          {mode === 'sandbox' ? (
            <CardFields errors={fields} sandbox />
          ) : (
            <StripePaymentElement errors={fields} mode={mode} publishableKey={publishableKey!} amount={owed.amount} currency={owed.currency} saveForLater />
          )}
          <p className="muted small">The card you pay with is kept for your next renewals.</p>
          <button type="submit" name="intent" value="pay" className="button pay" data-pay>
            Pay {formatMoney(owed.amount, owed.currency)}
          </button>
        </form>
      ) : (
        <Alert kind="error">{owed.sellerName} cannot take payments at the moment. Nothing was charged; try again later.</Alert>
      )}
    </CheckoutLayout>
  );
}

/** A pay link whose renewal is paid (by this page, or by a retry of the saved card meanwhile). */
export function PaidPage({ owed, mode, byThisPage }: { owed: OwedRenewal; mode: PaymentModeName; byThisPage: boolean }) {
  return (
    <CheckoutLayout title="Your renewal is paid" seller={owed.sellerName} mode={mode}>
      <Alert kind="success">
        {byThisPage ? `Thank you: your payment of ${formatMoney(owed.amount, owed.currency)} went through.` : 'This renewal has been paid; there is nothing left to pay.'} Your {owed.productName} subscription is active.
      </Alert>
      <Summary owed={owed} />
    </CheckoutLayout>
  );
}

/** A payment made on this page that waits for the bank (processing, or 3-D Secure in another tab): the page refreshes. */
export function WaitingPage({ owed, mode, refreshUrl }: { owed: OwedRenewal; mode: PaymentModeName; refreshUrl: string }) {
  return (
    <CheckoutLayout title="Confirming your payment" seller={owed.sellerName} mode={mode} refreshTo={{ url: refreshUrl, seconds: 2 }}>
      <Alert kind="info">Your payment is being confirmed. This page refreshes by itself.</Alert>
      <Summary owed={owed} />
    </CheckoutLayout>
  );
}

/** A link that can no longer be paid: expired, or the subscription no longer waits for this payment. */
export function PayLinkClosedPage({ owed, expired }: { owed: OwedRenewal; expired: boolean }) {
  return (
    <CheckoutLayout title={expired ? 'This payment link has expired' : 'This payment link is closed'} seller={owed.sellerName}>
      <Alert kind="error">
        {expired
          ? `This link was valid until ${day(owed.expiresAt)} UTC. Nothing was charged. A new link is emailed to you after the next attempt to charge your card.`
          : 'This subscription no longer waits for this payment. Nothing was charged.'}
      </Alert>
    </CheckoutLayout>
  );
}

/** Back from the bank after a payment that did not go through; the link in the mail opens the form again. */
export function PaymentNotCompletedPage({ owed, mode, reason }: { owed: OwedRenewal; mode: PaymentModeName; reason: string }) {
  return (
    <CheckoutLayout title="Your payment was not completed" seller={owed.sellerName} mode={mode}>
      <Alert kind="error">{`${reason} Nothing was charged. Open the link in your email again to pay with another card.`}</Alert>
      <Summary owed={owed} />
    </CheckoutLayout>
  );
}

export function PayLinkNotFoundPage() {
  return (
    <CheckoutLayout title="Payment link not found">
      <Alert kind="error">This payment link is not valid. Check that it was copied whole, or use the link from your most recent email.</Alert>
    </CheckoutLayout>
  );
}
