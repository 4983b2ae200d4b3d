import { Alert } from '../../components/Alert.js';
import { DateTime } from '../../components/DateTime.js';
import { CANCELLATION_REASONS } from '../../../../core/billing/subscriptions/schema.js';
import type { PortalSubscription } from '../data.js';
import { reasonLabel } from './OverviewPage.js';
import { PortalLayout } from './PortalLayout.js';

export interface CancelProps {
  seller: string;
  base: string;
  email: string;
  subscription: PortalSubscription;
  error?: string;
}

/** Cancel at the period's end, with a reason (SPEC §4) and a comment; nothing changes until the button is pressed. */
export function PortalCancelPage({ seller, base, email, subscription: s, error }: CancelProps) {
  return (
    <PortalLayout title={`Cancel ${s.product}`} seller={seller} base={base} email={email}>
      {error ? <Alert kind="error">{error}</Alert> : null}
      <p>
        Your subscription stays active until <DateTime value={s.currentPeriodEnd} /> UTC, then ends. Nothing more is charged. You can take the cancellation back until then.
      </p>
      <form method="post" action={`${base}/subscriptions/${encodeURIComponent(s.id)}/cancel`} className="card">
        <fieldset className="group">
          <legend>Why are you canceling? (optional)</legend>
          {CANCELLATION_REASONS.map((reason) => (
            <label key={reason} className="choice">
              <input type="radio" name="reason" value={reason} /> {reasonLabel(reason)}
            </label>
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor="field-comment">Anything else to tell {seller}? (optional)</label>
          <textarea id="field-comment" name="comment" rows={3} maxLength={2000} />
        </div>
        <div className="actions">
          <button type="submit" className="button button-danger">
            Cancel subscription
          </button>{' '}
          <a href={base}>Keep it</a>
        </div>
      </form>
    </PortalLayout>
  );
}
