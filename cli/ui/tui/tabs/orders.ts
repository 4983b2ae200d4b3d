import { formatMoney, shortDate } from '../../record.js';
import type { TuiBackend } from '../backend.js';
import type { Section } from '../components/DetailView.js';
import type { ResourceConfig, Row } from './ResourceTab.js';

const money = (amount: unknown, currency: unknown) => formatMoney(Number(amount ?? 0), String(currency ?? 'usd'));
const q = (organizationId: string) => `organization_id=${encodeURIComponent(organizationId)}`;
const id = (row: Row | undefined) => encodeURIComponent(String(row?.id));
const emailOf = (row: Row) => String((row.customer as Row | undefined)?.email ?? row.customer_id ?? '');

const REASONS = ['customer_request', 'duplicate', 'fraudulent', 'service_disruption', 'satisfaction_guarantee', 'dispute_prevention', 'other'];

/** An order's items, payments and refunds. */
export async function orderSections(backend: TuiBackend, order: Row): Promise<Section[]> {
  const [payments, refunds] = await Promise.all([
    backend.request<{ items: Row[] }>('GET', `/v1/payments/?order_id=${id(order)}&limit=100`),
    backend.request<{ items: Row[] }>('GET', `/v1/refunds/?order_id=${id(order)}&limit=100`),
  ]);
  const currency = order.currency;
  const items = Array.isArray(order.items) ? (order.items as Row[]) : [];
  return [
    {
      title: `${String((order.product as Row | undefined)?.name ?? 'Order')} · ${emailOf(order)} · ${String(order.status)}`,
      lines: [
        `Created ${shortDate(order.created_at)} · ${String(order.billing_reason ?? '')}${order.subscription_id ? ` · subscription ${String(order.subscription_id)}` : ''}`,
        `Subtotal ${money(order.subtotal_amount, currency)} · discount ${money(order.discount_amount, currency)} · tax ${money(order.tax_amount, currency)} · total ${money(order.total_amount, currency)}`,
        `Refunded ${money(order.refunded_amount, currency)} · refundable ${money(order.refundable_amount, currency)} (before tax)`,
      ],
    },
    { title: 'Items', lines: items.map((item) => `${money(item.amount, currency).padStart(12)}  ${String(item.label)}`) },
    {
      title: 'Payments',
      lines: payments.items.map((p) => `${shortDate(p.created_at)}  ${money(p.amount, p.currency).padStart(12)}  ${String(p.status)}${p.decline_message ? ` · ${String(p.decline_message)}` : ''}`),
    },
    {
      title: 'Refunds',
      lines: refunds.items.map((r) => `${shortDate(r.created_at)}  ${money(r.amount, r.currency).padStart(12)}  ${String(r.status)} · ${String(r.reason)}`),
    },
  ];
}

/**
 * Orders: the organization's orders, newest first; `s` one-time or recurring only, `/` search; refund one (amount,
 * reason, revoke benefits), get its invoice link; Enter shows its items, payments and refunds.
 */
export const ordersConfig: ResourceConfig = {
  noun: 'orders',
  listPath: (org) => `/v1/orders/?${q(org)}&limit=100&sorting=-created_at`,
  filters: [
    { name: 'all', query: '' },
    { name: 'one-time', query: 'product_billing_type=one_time' },
    { name: 'recurring', query: 'product_billing_type=recurring' },
  ],
  search: 'local',
  searchText: (o) => [o.id, emailOf(o), (o.product as Row | undefined)?.name, o.status, o.invoice_number].map((v) => String(v ?? '')).join(' '),
  empty: 'No orders yet.',
  columns: [
    { header: 'CREATED', width: 16, value: (o) => shortDate(o.created_at) },
    { header: 'CUSTOMER', width: 20, value: emailOf },
    { header: 'TOTAL', width: 11, value: (o) => money(o.total_amount, o.currency) },
    { header: 'REFUNDABLE', width: 11, value: (o) => money(o.refundable_amount, o.currency) },
    { header: 'STATUS', width: 18, value: (o) => String(o.status) },
  ],
  details: (o) => ({ title: `Order ${String(o.id)}`, load: (backend) => orderSections(backend, o) }),
  actions: [
    {
      key: 'f',
      label: 'refund',
      needsRow: true,
      refuse: (o) => (Number(o.refundable_amount ?? 0) > 0 ? undefined : `Nothing left to refund on this order (${String(o.status)}).`),
      form: (o) => ({
        title: `Refund order ${String(o?.id)} (refundable ${money(o?.refundable_amount, o?.currency)} before tax)`,
        fields: [
          { name: 'amount', label: 'Amount', initial: String(o?.refundable_amount ?? ''), hint: `minor units, ${String(o?.currency ?? '').toUpperCase()}` },
          { name: 'reason', label: 'Reason', choices: REASONS },
          { name: 'revoke', label: 'Revoke benefits', choices: ['no', 'yes'] },
        ],
      }),
      prepare(o, values) {
        const order = o!;
        const text = (values.amount ?? '').trim();
        if (!text) throw new Error('Amount is required.');
        const amount = Number(text);
        const refundable = Number(order.refundable_amount ?? 0);
        if (!Number.isInteger(amount) || amount < 1) throw new Error('Amount must be a whole number of minor units from 1.');
        if (amount > refundable) throw new Error(`At most ${money(refundable, order.currency)} (${refundable}) is refundable.`);
        const revoke = values.revoke === 'yes';
        return {
          lines: [`Refund ${money(amount, order.currency)} (plus its share of tax) of order ${String(order.id)}`, `Reason: ${String(values.reason)} · benefits ${revoke ? 'revoked' : 'kept'}`],
          method: 'POST',
          path: '/v1/refunds/',
          body: { order_id: order.id, amount, reason: values.reason, revoke_benefits: revoke },
          done: `Refunded ${money(amount, order.currency)}.`,
        };
      },
    },
    {
      key: 'i',
      label: 'invoice link',
      needsRow: true,
      refuse: (o) => (o.paid === false || o.status === 'pending' ? 'The order is not paid yet: it has no invoice.' : undefined),
      prepare: (o) => ({
        lines: [`Get a link to the invoice of order ${String(o!.id)} (${emailOf(o!)})?`, 'It is generated on first ask (it needs the billing name and address); the link works for an hour, for anyone who has it.'],
        method: 'GET',
        path: `/v1/orders/${id(o)}/invoice`,
        done: (answer) => `Invoice link (1 hour): ${String((answer as Row | null)?.url)}`,
        link: (answer) => String((answer as Row | null)?.url ?? ''),
      }),
    },
  ],
};
