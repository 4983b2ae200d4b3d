import { formatMoney, shortDate } from '../../record.js';
import type { TuiBackend } from '../backend.js';
import type { Section } from '../components/DetailView.js';
import type { ResourceConfig, Row } from './ResourceTab.js';

const money = (amount: unknown, currency: unknown) => formatMoney(Number(amount ?? 0), String(currency ?? 'usd'));
const q = (organizationId: string) => `organization_id=${encodeURIComponent(organizationId)}`;
const path = (row: Row | undefined) => `/v1/subscriptions/${encodeURIComponent(String(row?.id))}`;
const emailOf = (s: Row) => String((s.customer as Row | undefined)?.email ?? s.customer_id ?? '');
const productOf = (s: Row) => String((s.product as Row | undefined)?.name ?? s.product_id ?? '');
const SHORT: Record<string, string> = { day: 'd', week: 'wk', month: 'mo', year: 'yr' };
const per = (s: Row) => (s.recurring_interval ? `/${Number(s.recurring_interval_count ?? 1) > 1 ? String(s.recurring_interval_count) : ''}${SHORT[String(s.recurring_interval)] ?? String(s.recurring_interval)}` : '');
const live = (s: Row) => ['active', 'trialing', 'past_due'].includes(String(s.status));

/** Customer cancellation reasons (SPEC §4, Polar's CustomerCancellationReason), as `till subscriptions cancel --reason`. */
export const CANCELLATION_REASONS = ['customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other'];

/** "2026-12-20T10:00:00Z" → "2026-12-20". */
const day = (value: unknown) => shortDate(value).slice(0, 10);

/** What happens next to a subscription, in a few words (dates by `date`: to the minute unless said). */
function nextStep(s: Row, date: (value: unknown) => string = shortDate): string {
  if (s.ended_at) return `ended ${date(s.ended_at)}`;
  if (s.cancel_at_period_end) return `ends ${date(s.ends_at ?? s.current_period_end)}`;
  if (s.status === 'trialing') return `trial to ${date(s.trial_end ?? s.current_period_end)}`;
  return live(s) ? `renews ${date(s.current_period_end)}` : '';
}

/** A subscription's history: started, each order (first, renewals, plan changes), canceled, ended; then what is next. */
export async function subscriptionSections(backend: TuiBackend, organizationId: string, s: Row): Promise<Section[]> {
  const orders = (await backend.request<{ items: Row[] }>('GET', `/v1/orders/?${q(organizationId)}&subscription_id=${encodeURIComponent(String(s.id))}&limit=100&sorting=-created_at`)).items;
  const history: { at: string; text: string }[] = [];
  if (s.started_at) history.push({ at: String(s.started_at), text: 'started' });
  if (s.trial_start) history.push({ at: String(s.trial_start), text: `trial until ${shortDate(s.trial_end)}` });
  for (const o of orders) history.push({ at: String(o.created_at), text: `${String(o.billing_reason ?? 'order')} · ${money(o.total_amount, o.currency)} · ${String(o.status)}` });
  if (s.canceled_at) {
    const reason = s.customer_cancellation_reason ? ` (${String(s.customer_cancellation_reason)}${s.customer_cancellation_comment ? `: “${String(s.customer_cancellation_comment)}”` : ''})` : '';
    history.push({ at: String(s.canceled_at), text: `canceled${reason}${s.ends_at && !s.ended_at ? `, ends ${shortDate(s.ends_at)}` : ''}` });
  }
  if (s.ended_at) history.push({ at: String(s.ended_at), text: 'ended' });
  history.sort((a, b) => a.at.localeCompare(b.at));
  return [
    {
      title: `${productOf(s)} · ${emailOf(s)} · ${String(s.status)}`,
      lines: [
        `${money(s.amount, s.currency)}${per(s)}${s.discount_id ? ` · discount ${String(s.discount_id)}` : ''}`,
        `Current period ${shortDate(s.current_period_start)} → ${shortDate(s.current_period_end)}${nextStep(s) ? ` · ${nextStep(s)}` : ''}`,
      ],
    },
    { title: 'History', lines: history.map((entry) => `${shortDate(entry.at)}  ${entry.text}`) },
  ];
}

const reasonField = { name: 'reason', label: 'Reason', choices: ['(none)', ...CANCELLATION_REASONS] };
const reasonBody = (values: Record<string, string>) => {
  const body: Record<string, unknown> = {};
  if (values.reason && values.reason !== '(none)') body.customer_cancellation_reason = values.reason;
  if (values.comment?.trim()) body.customer_cancellation_comment = values.comment.trim();
  return body;
};

/**
 * Subscriptions: `s` active, canceling, past due, canceled only; `/` search; `c` cancel at the period end (with a
 * reason), `u` uncancel, `x` revoke now (benefits revoked), each after a confirmation; Enter shows its history.
 */
export const subscriptionsConfig: ResourceConfig = {
  noun: 'subscriptions',
  listPath: (org) => `/v1/subscriptions/?${q(org)}&limit=100`,
  filters: [
    { name: 'all', query: '' },
    { name: 'active', query: 'active=true' },
    { name: 'canceling', query: 'active=true&cancel_at_period_end=true' },
    { name: 'past due', query: 'status=past_due' },
    { name: 'canceled', query: 'status=canceled' },
  ],
  search: 'local',
  searchText: (s) => [s.id, emailOf(s), productOf(s), s.status].map((v) => String(v ?? '')).join(' '),
  empty: 'No subscriptions here.',
  columns: [
    { header: 'CUSTOMER', width: 20, value: emailOf },
    { header: 'PRODUCT', width: 14, value: productOf },
    { header: 'AMOUNT', width: 14, value: (s) => `${money(s.amount, s.currency)}${per(s)}` },
    { header: 'STATUS', width: 9, value: (s) => String(s.status) },
    // The day only: with the time (23 columns) it was cut to "renews 2026-12-20 …"; the details keep the minute.
    { header: 'NEXT', width: 19, value: (s) => nextStep(s, day) },
  ],
  details: (s) => ({ title: `Subscription ${String(s.id)}`, load: (backend, organizationId) => subscriptionSections(backend, organizationId, s) }),
  actions: [
    {
      key: 'c',
      label: 'cancel',
      needsRow: true,
      refuse: (s) => (!live(s) ? `This subscription is ${String(s.status)}: nothing to cancel.` : s.cancel_at_period_end ? `It already ends on ${shortDate(s.ends_at ?? s.current_period_end)} (u uncancels).` : undefined),
      form: (s) => ({
        title: `Cancel ${productOf(s!)} of ${emailOf(s!)} at the end of its period (${shortDate(s!.current_period_end)})`,
        fields: [reasonField, { name: 'comment', label: 'Comment', hint: 'optional' }],
      }),
      prepare: (s, values) => ({
        lines: [`Cancel ${productOf(s!)} of ${emailOf(s!)} at the end of its period?`, `It keeps running until ${shortDate(s!.current_period_end)}, then ends; u takes it back until then.`],
        method: 'PATCH',
        path: path(s),
        body: { cancel_at_period_end: true, ...reasonBody(values) },
        done: (answer) => `Cancels at the end of its period, ${shortDate((answer as Row | null)?.ends_at ?? s!.current_period_end)}.`,
      }),
    },
    {
      key: 'u',
      label: 'uncancel',
      needsRow: true,
      refuse: (s) => (s.cancel_at_period_end && live(s) ? undefined : 'It is not set to cancel: nothing to take back.'),
      prepare: (s) => ({
        lines: [`Take back the cancellation of ${productOf(s!)} of ${emailOf(s!)}?`, `It renews on ${shortDate(s!.current_period_end)}.`],
        method: 'PATCH',
        path: path(s),
        body: { cancel_at_period_end: false },
        done: (answer) => `Renews on ${shortDate((answer as Row | null)?.current_period_end ?? s!.current_period_end)}.`,
      }),
    },
    {
      key: 'x',
      label: 'revoke',
      needsRow: true,
      refuse: (s) => (live(s) ? undefined : `This subscription is ${String(s.status)} already.`),
      form: (s) => ({
        title: `Revoke ${productOf(s!)} of ${emailOf(s!)} now`,
        fields: [reasonField, { name: 'comment', label: 'Comment', hint: 'optional' }],
      }),
      prepare: (s, values) => ({
        lines: [`End ${productOf(s!)} of ${emailOf(s!)} now and revoke its benefits?`, 'This cannot be taken back.'],
        method: 'PATCH',
        path: path(s),
        body: { revoke: true, ...reasonBody(values) },
        done: 'Ended now; its benefits are revoked.',
      }),
    },
  ],
};
