import { Alert } from '../../components/Alert.js';
import { DateTime } from '../../components/DateTime.js';
import { PostButton } from '../../components/PostButton.js';
import { formatMoney } from '../../checkout/money.js';
import type { PortalBenefit, PortalLicenseKey, PortalMeter, PortalOverview, PortalSubscription } from '../data.js';
import { PortalLayout } from './PortalLayout.js';

export interface OverviewProps {
  seller: string;
  base: string;
  overview: PortalOverview;
  notice?: string;
  error?: string;
  /** Where the seller's site asked the customer to be sent back to, if it did. */
  returnUrl: string | null;
}

const day = (value: Date) => value.toISOString().slice(0, 10);
const every = (interval: string, count: number) => (count === 1 ? `per ${interval}` : `every ${count} ${interval}s`);

const REASON_LABELS: Record<string, string> = {
  customer_service: 'Customer service',
  low_quality: 'Quality was lower than expected',
  missing_features: 'Missing features',
  switched_service: 'Switched to another service',
  too_complex: 'Too complicated to use',
  too_expensive: 'Too expensive',
  unused: 'I do not use it enough',
  other: 'Another reason',
};
export const reasonLabel = (reason: string) => REASON_LABELS[reason] ?? reason;

function Subscription({ base, subscription: s, planChanges }: { base: string; subscription: PortalSubscription; planChanges: boolean }) {
  const path = `${base}/subscriptions/${encodeURIComponent(s.id)}`;
  return (
    <article className="portal-card" data-testid="subscription">
      <h3>{s.product}</h3>
      <p>
        {formatMoney(s.amount, s.currency)} {every(s.interval, s.intervalCount)} · {s.status === 'trialing' ? 'Free trial' : s.status === 'past_due' ? 'Payment overdue' : 'Active'}
      </p>
      {s.cancelAtPeriodEnd ? (
        <p data-testid="subscription-ends">
          Canceled: it ends on <DateTime value={s.endsAt ?? s.currentPeriodEnd} /> UTC, and nothing more will be charged.
        </p>
      ) : (
        <p data-testid="next-charge">
          Next charge: {formatMoney(s.amount, s.currency)} on <DateTime value={s.currentPeriodEnd} /> UTC
        </p>
      )}
      <div className="actions">
        {s.cancelAtPeriodEnd ? (
          <PostButton action={`${path}/uncancel`} label="Keep my subscription" variant="primary" />
        ) : (
          <>
            {planChanges ? (
              <a className="button" href={`${path}/change`}>
                Change plan
              </a>
            ) : null}{' '}
            <a className="button button-secondary" href={`${path}/cancel`}>
              Cancel subscription
            </a>
          </>
        )}
      </div>
    </article>
  );
}

function LicenseKey({ licenseKey: k }: { licenseKey: PortalLicenseKey }) {
  const inputId = `key-${k.id}`;
  return (
    <article className="portal-card" data-testid="license-key">
      <h3>{k.benefit}</h3>
      <div className="key-row">
        <label className="visually-hidden" htmlFor={inputId}>
          License key
        </label>
        <input id={inputId} readOnly value={k.key} aria-describedby={`${inputId}-status`} />
        {/* Shown by portal.js: without JavaScript, select the key in the field and copy it. */}
        <button type="button" className="button button-secondary" data-copy={inputId} hidden>
          Copy
        </button>
      </div>
      <p id={`${inputId}-status`} className="copy-status" role="status" />
      <p className="muted">
        {k.status === 'granted' ? 'Active' : k.status === 'revoked' ? 'Revoked' : 'Disabled'}
        {k.limitActivations !== null ? ` · ${k.activations.length} of ${k.limitActivations} activations` : ` · ${k.activations.length} activation${k.activations.length === 1 ? '' : 's'}`}
        {k.limitUsage !== null ? ` · used ${k.usage} of ${k.limitUsage}` : ''}
        {k.expiresAt ? ` · expires ${day(k.expiresAt)}` : ''}
      </p>
      {k.activations.length ? (
        <ul className="plain" aria-label="Activations">
          {k.activations.map((activation) => (
            <li key={activation.id}>
              {activation.label} <span className="muted">(since {day(activation.createdAt)})</span>
            </li>
          ))}
        </ul>
      ) : null}
    </article>
  );
}

function Meter({ meter }: { meter: PortalMeter }) {
  const max = Math.max(meter.credited, meter.consumed, 1);
  return (
    <article className="portal-card" data-testid="meter">
      <h3>{meter.name}</h3>
      <progress className="meter-bar" max={max} value={Math.min(meter.consumed, max)} aria-label={`${meter.name}: ${meter.consumed} used`} />
      <p className="muted">
        {meter.consumed} used{meter.credited > 0 ? ` of ${meter.credited} included · ${Math.max(meter.balance, 0)} left` : ''}
      </p>
    </article>
  );
}

function Benefit({ base, benefit: b }: { base: string; benefit: PortalBenefit }) {
  return (
    <li className="portal-card" data-testid="benefit">
      <h3>{b.description}</h3>
      {b.note ? <p>{b.note}</p> : null}
      <p className="muted">{b.state === 'granted' ? 'Granted' : b.state === 'revoked' ? 'Ended' : 'Being granted'}</p>
      {b.error ? <p className="field-error">{b.error}</p> : null}
      {/*
        Account connection (issue 17, oauth17): the OAuth start route /portal/{slug}/connect/{github|discord}?grant_id=…
        is served by the connect routes; this link is its entry point on the overview.
      */}
      {b.connect && b.state !== 'revoked' ? (
        <p className="connect-slot" data-testid={`connect-${b.connect}`}>
          <a href={`${base}/connect/${b.connect}?grant_id=${encodeURIComponent(b.grantId)}`}>{b.connect === 'github' ? 'Connect your GitHub account' : 'Connect your Discord account'}</a> to receive this benefit.
        </p>
      ) : null}
    </li>
  );
}

/** The overview: subscriptions, orders, license keys, downloads, usage and benefits of the signed-in customer. */
export function PortalOverviewPage({ seller, base, overview, notice, error, returnUrl }: OverviewProps) {
  const { customer, subscriptions, orders, licenseKeys, downloads, meters, benefits } = overview;
  return (
    <PortalLayout title="Your account" seller={seller} base={base} email={customer.email}>
      {notice ? <Alert kind="success">{notice}</Alert> : null}
      {error ? <Alert kind="error">{error}</Alert> : null}
      {returnUrl ? (
        <p>
          <a href={returnUrl}>Back to {seller}</a>
        </p>
      ) : null}

      <section className="portal-section" aria-labelledby="subscriptions">
        <h2 id="subscriptions">Subscriptions</h2>
        {subscriptions.length ? subscriptions.map((s) => <Subscription key={s.id} base={base} subscription={s} planChanges={overview.planChanges} />) : <p className="muted">No active subscriptions.</p>}
        <p>
          <a href={`${base}/payment-methods`} data-testid="payment-methods-link">
            Update your card
          </a>
          {overview.emailChanges ? (
            <>
              {' · '}
              <a href={`${base}/email`}>Change your email address</a>
            </>
          ) : null}
        </p>
      </section>

      <section className="portal-section" aria-labelledby="orders">
        <h2 id="orders">Orders</h2>
        {orders.length ? (
          <div className="table-scroll">
            <table className="portal-table">
              <thead>
                <tr>
                  <th scope="col">Date</th>
                  <th scope="col">Item</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Documents</th>
                </tr>
              </thead>
              <tbody>
                {orders.map((order) => (
                  <tr key={order.id} data-testid="order">
                    <td>{day(order.createdAt)}</td>
                    <td>{order.description}</td>
                    <td className="amount">
                      {formatMoney(order.totalAmount, order.currency)}
                      {order.status === 'pending' ? ' (not paid yet)' : order.status === 'refunded' ? ' (refunded)' : order.refundedAmount > 0 ? ` (${formatMoney(order.refundedAmount, order.currency)} refunded)` : ''}
                    </td>
                    <td>
                      {order.receiptUrl ? (
                        <>
                          <a href={order.receiptUrl}>Receipt (PDF)</a>
                          {' · '}
                          <a href={`${base}/orders/${encodeURIComponent(order.id)}/invoice`}>Invoice (PDF)</a>
                        </>
                      ) : (
                        <span className="muted">After payment</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p className="muted">No orders yet.</p>
        )}
      </section>

      {licenseKeys.length ? (
        <section className="portal-section" aria-labelledby="license-keys">
          <h2 id="license-keys">License keys</h2>
          {licenseKeys.map((k) => (
            <LicenseKey key={k.id} licenseKey={k} />
          ))}
        </section>
      ) : null}

      {downloads.length ? (
        <section className="portal-section" aria-labelledby="downloads">
          <h2 id="downloads">Downloads</h2>
          <ul className="plain">
            {downloads.map((d) => (
              <li key={d.id} className="portal-card" data-testid="download">
                <a href={d.url} download={d.name}>
                  {d.name}
                </a>{' '}
                <span className="muted">
                  ({formatSize(d.size)}, {d.benefit})
                </span>
              </li>
            ))}
          </ul>
          <p className="muted">Download links work for an hour; reload this page for new ones.</p>
        </section>
      ) : null}

      {meters.length ? (
        <section className="portal-section" aria-labelledby="usage">
          <h2 id="usage">Usage</h2>
          {meters.map((m) => (
            <Meter key={m.id} meter={m} />
          ))}
        </section>
      ) : null}

      {benefits.length ? (
        <section className="portal-section" aria-labelledby="benefits">
          <h2 id="benefits">Benefits</h2>
          <ul className="plain">
            {benefits.map((b) => (
              <Benefit key={b.grantId} base={base} benefit={b} />
            ))}
          </ul>
        </section>
      ) : null}
    </PortalLayout>
  );
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
