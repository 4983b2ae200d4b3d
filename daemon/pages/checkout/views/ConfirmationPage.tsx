import { Alert } from '../../components/Alert.js';
import { Amounts } from '../components/Amounts.js';
import { CheckoutLayout } from '../components/CheckoutLayout.js';
import { successUrlOf, trialText } from '../describe.js';
import { formatMoney } from '../money.js';
import type { Receipt, ReceivedBenefit } from '../receipt.js';
import type { CheckoutWire } from '../types.js';
import type { PaymentModeName } from '../../../payment-mode.js';

/** Seconds the confirmation shows before the browser goes on to the seller's success URL. */
export const SUCCESS_REDIRECT_SECONDS = 5;

export interface ConfirmationPageProps {
  checkout: CheckoutWire;
  /** The order and benefits; null while the payment is still being confirmed. */
  receipt: Receipt | null;
  /** This daemon's URL: a success URL pointing back at the checkout itself is no redirect. */
  baseUrl: string;
  mode: PaymentModeName;
}

/** After paying: what was bought, the receipt, the benefits, and on to the seller's page when it has one. */
export function ConfirmationPage({ checkout, receipt, baseUrl, mode }: ConfirmationPageProps) {
  const processing = checkout.status !== 'succeeded';
  const product = checkout.product;
  const next = processing ? null : sellerSuccessUrl(checkout, baseUrl);
  const order = receipt?.order ?? null;
  const trial = product?.is_recurring ? trialText(checkout) : null;
  return (
    <CheckoutLayout
      title={processing ? 'Confirming your payment' : 'Thank you for your purchase'}
      seller={checkout.organization.name}
      mode={mode}
      refreshTo={processing ? { url: `/checkout/${encodeURIComponent(checkout.client_secret)}/confirmation`, seconds: 2 } : next ? { url: next, seconds: SUCCESS_REDIRECT_SECONDS } : undefined}
    >
      {processing ? (
        <Alert kind="info">Your payment is being confirmed. This page refreshes by itself.</Alert>
      ) : (
        <Alert kind="success">
          {purchaseSummary(checkout, order)}
          {checkout.customer_email ? ` The order is under ${checkout.customer_email}.` : ''}
        </Alert>
      )}

      {next ? (
        <p data-testid="success-redirect">
          Taking you back to {checkout.organization.name} in {SUCCESS_REDIRECT_SECONDS} seconds. <a href={next} target={checkout.embed_origin ? '_top' : undefined}>
            Continue now
          </a>
        </p>
      ) : null}

      <h2>Receipt</h2>
      <div className="card">
        <dl className="facts">
          {order ? (
            <>
              <dt>Order</dt>
              <dd data-testid="order-id">{order.invoice_number ?? order.id}</dd>
              <dt>Date</dt>
              <dd>{order.created_at.slice(0, 10)}</dd>
            </>
          ) : null}
          <dt>Product</dt>
          <dd>{product?.name ?? '—'}</dd>
          {checkout.customer_email ? (
            <>
              <dt>Email</dt>
              <dd>{checkout.customer_email}</dd>
            </>
          ) : null}
        </dl>
        {order ? (
          <>
            <table className="amounts">
              <caption className="visually-hidden">Items</caption>
              <tbody>
                {order.items.map((item) => (
                  <tr key={item.id}>
                    <th scope="row">{item.label}</th>
                    <td>{formatMoney(item.amount, order.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Amounts caption="Amounts paid" currency={order.currency} subtotal={order.subtotal_amount} discount={order.discount_amount} tax={order.tax_amount} total={order.total_amount} product={product} />
          </>
        ) : (
          <Amounts caption="Amounts" currency={checkout.currency} subtotal={checkout.amount} discount={checkout.discount_amount} tax={checkout.tax_amount} total={checkout.total_amount} product={product} trial={trial} />
        )}
      </div>

      {receipt && receipt.benefits.length > 0 ? (
        <>
          <h2>Your benefits</h2>
          <ul className="card benefits-received" aria-label="Benefits">
            {receipt.benefits.map((benefit) => (
              <BenefitItem key={benefit.id} benefit={benefit} />
            ))}
          </ul>
        </>
      ) : null}
    </CheckoutLayout>
  );
}

/** One sentence on what the customer now has: a purchase, an active subscription, or a trial and when it ends. */
function purchaseSummary(checkout: CheckoutWire, order: Receipt['order']): string {
  const product = checkout.product;
  if (!product) return 'Your purchase is complete.';
  if (!product.is_recurring) return `You bought ${product.name}.`;
  const subscription = order?.subscription;
  if (subscription?.status === 'trialing' && subscription.trial_end) {
    return `Your free trial of ${product.name} has started. The first payment is due on ${subscription.trial_end.slice(0, 10)}.`;
  }
  return `Your subscription to ${product.name} is active.`;
}

function BenefitItem({ benefit }: { benefit: ReceivedBenefit }) {
  return (
    <li data-benefit-type={benefit.type}>
      <strong>{benefit.description}</strong>
      {benefit.error ? <p className="field-error">Not granted yet: {benefit.error}</p> : !benefit.granted ? <p className="muted">Being granted…</p> : null}
      {benefit.note ? <p className="description">{benefit.note}</p> : null}
      {benefit.licenseKey ? (
        <p>
          License key: <code className="license-key" data-testid="license-key">{benefit.licenseKey.key}</code>
          {benefit.licenseKey.expiresAt ? <span className="muted small"> (valid until {benefit.licenseKey.expiresAt.slice(0, 10)})</span> : null}
        </p>
      ) : null}
      {benefit.files && benefit.files.length > 0 ? <p>Files: {benefit.files.join(', ')}</p> : null}
    </li>
  );
}

/** The seller's success URL, unless it is the checkout's own page (a default pointing back here). */
function sellerSuccessUrl(checkout: CheckoutWire, baseUrl: string): string | null {
  const url = successUrlOf(checkout);
  if (!url) return null;
  try {
    const parsed = new URL(url);
    if (!['http:', 'https:'].includes(parsed.protocol)) return null;
    if (parsed.origin === new URL(baseUrl).origin && parsed.pathname.startsWith('/checkout/')) return null;
    return parsed.toString();
  } catch {
    return null;
  }
}
