import { Alert } from '../../components/Alert.js';
import { DateTime } from '../../components/DateTime.js';
import { HiddenFields } from '../../components/PostButton.js';
import { formatMoney } from '../../checkout/money.js';
import type { PlanOption } from '../../../../core/billing/customer-sessions/subscription-update.js';
import type { PlanChangePreview } from '../../../../core/billing/subscriptions/change-product.js';
import type { PortalSubscription } from '../data.js';
import { PortalLayout } from './PortalLayout.js';

export interface ChangePlanProps {
  seller: string;
  base: string;
  email: string;
  subscription: PortalSubscription;
  /** False when the seller does not let customers change plan. */
  allowed: boolean;
  options: PlanOption[];
  /** The plan picked, once "Review" was pressed. */
  chosen?: PlanOption;
  preview?: PlanChangePreview;
  error?: string;
}

const every = (interval: string, count: number) => (count === 1 ? `per ${interval}` : `every ${count} ${interval}s`);

/** What confirming will bill, computed by previewCustomerPlanChange: charged now, or added to the next renewal. */
function Preview({ preview: p, subscription: s }: { preview: PlanChangePreview; subscription: PortalSubscription }) {
  const money = (amount: number) => formatMoney(amount, p.currency);
  return (
    <section className="portal-card" data-testid="plan-preview" aria-labelledby="preview-heading">
      <h2 id="preview-heading">What changes</h2>
      {p.lines.length ? (
        <table className="portal-table">
          <tbody>
            {p.lines.map((line) => (
              <tr key={line.label}>
                <td>{line.label}</td>
                <td className="amount">{money(line.amount)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>Your free trial continues: the new price applies from the first charge.</p>
      )}
      {p.dueNow ? (
        <p data-testid="due-now">
          <strong>Charged now: {money(p.dueNow.totalAmount)}</strong>
          {p.dueNow.taxAmount ? ` (incl. ${money(p.dueNow.taxAmount)} tax)` : ''}
          {p.dueNow.discountAmount ? `, after a ${money(p.dueNow.discountAmount)} discount` : ''}, to the card of this subscription.
        </p>
      ) : p.lines.length ? (
        <p data-testid="next-renewal-adjustment">
          {p.nextRenewalAdjustment >= 0
            ? `Nothing is charged now: ${money(p.nextRenewalAdjustment)} is added to your next charge`
            : `Nothing is charged now: ${money(-p.nextRenewalAdjustment)} is taken off your next charge`}{' '}
          on <DateTime value={s.currentPeriodEnd} /> UTC.
        </p>
      ) : null}
      <p>
        From then on: {money(p.amount)} {every(s.interval, s.intervalCount)} (before tax and discounts).
      </p>
    </section>
  );
}

/**
 * Change plan, in two steps that work without JavaScript: pick a plan (a GET form: nothing changes), read the
 * prorated amounts, then confirm (a POST).
 */
export function PortalChangePlanPage({ seller, base, email, subscription: s, allowed, options, chosen, preview, error }: ChangePlanProps) {
  const path = `${base}/subscriptions/${encodeURIComponent(s.id)}/change`;
  return (
    <PortalLayout title={`Change plan: ${s.product}`} seller={seller} base={base} email={email}>
      {error ? <Alert kind="error">{error}</Alert> : null}
      <p>
        Now: {s.product}, {formatMoney(s.amount, s.currency)} {every(s.interval, s.intervalCount)}.
      </p>
      {!allowed ? (
        <p>{seller} does not let customers change plan here. Ask them to change it for you.</p>
      ) : options.length === 0 ? (
        <p>There is no other plan to move to.</p>
      ) : (
        <form method="get" action={path} className="card">
          <fieldset className="group">
            <legend>Move to</legend>
            {options.map((option) => (
              <label key={option.productId} className="choice">
                <input type="radio" name="product_id" value={option.productId} defaultChecked={chosen?.productId === option.productId} required /> {option.name}, {formatMoney(option.amount, option.currency)}{' '}
                {every(s.interval, s.intervalCount)}
              </label>
            ))}
          </fieldset>
          <div className="actions">
            <button type="submit" className={preview ? 'button button-secondary' : 'button'}>
              Review the change
            </button>
          </div>
        </form>
      )}
      {preview && chosen ? (
        <>
          <Preview preview={preview} subscription={s} />
          <form method="post" action={path} className="card">
            <HiddenFields fields={{ product_id: chosen.productId }} />
            <div className="actions">
              <button type="submit" className="button">
                Confirm: move to {chosen.name}
              </button>{' '}
              <a href={base}>Keep my plan</a>
            </div>
          </form>
        </>
      ) : (
        <p>
          <a href={base}>Back to your account</a>
        </p>
      )}
    </PortalLayout>
  );
}
