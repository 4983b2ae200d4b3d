import { formatMoney, shortDate } from '../../record.js';
import type { TuiBackend } from '../backend.js';
import type { Section } from '../components/DetailView.js';
import type { ResourceConfig, Row } from './ResourceTab.js';

const money = (amount: unknown, currency: unknown) => formatMoney(Number(amount ?? 0), String(currency ?? 'usd'));
const q = (organizationId: string) => `organization_id=${encodeURIComponent(organizationId)}`;
const customerQuery = (row: Row) => `customer_id=${encodeURIComponent(String(row.id))}`;
const per = (s: Row) => (s.recurring_interval ? `/${Number(s.recurring_interval_count ?? 1) > 1 ? `${String(s.recurring_interval_count)} ` : ''}${String(s.recurring_interval)}` : '');
const units = (value: unknown) => (typeof value === 'number' ? value.toLocaleString('en-US', { maximumFractionDigits: 4 }) : String(value ?? 0));

/** A customer's state: subscriptions, benefit grants, meters and orders. */
export async function customerSections(backend: TuiBackend, organizationId: string, customer: Row): Promise<Section[]> {
  const [subscriptions, grants, meters, orders] = await Promise.all([
    backend.request<{ items: Row[] }>('GET', `/v1/subscriptions/?${q(organizationId)}&${customerQuery(customer)}&limit=100`),
    backend.request<{ items: Row[] }>('GET', `/v1/benefit-grants/?${customerQuery(customer)}&limit=100`),
    backend.request<{ items: Row[] }>('GET', `/v1/customer-meters/?${customerQuery(customer)}&limit=100`),
    backend.request<{ items: Row[] }>('GET', `/v1/orders/?${q(organizationId)}&${customerQuery(customer)}&limit=20&sorting=-created_at`),
  ]);
  return [
    {
      title: `${String(customer.email)}${customer.name ? ` · ${String(customer.name)}` : ''}`,
      lines: [`Customer since ${shortDate(customer.created_at)}${customer.external_id ? ` · external id ${String(customer.external_id)}` : ''}`],
    },
    {
      title: `Subscriptions (${subscriptions.items.length})`,
      lines: subscriptions.items.map(
        (s) =>
          `${String((s.product as Row | undefined)?.name ?? s.product_id)} · ${money(s.amount, s.currency)}${per(s)} · ${String(s.status)}${s.cancel_at_period_end ? ` · ends ${shortDate(s.ends_at ?? s.current_period_end)}` : s.status === 'active' ? ` · renews ${shortDate(s.current_period_end)}` : ''}`,
      ),
    },
    {
      title: `Benefit grants (${grants.items.length})`,
      lines: grants.items.map((g) => `${String((g.benefit as Row | undefined)?.description ?? g.benefit_id)} (${String((g.benefit as Row | undefined)?.type ?? '')}) · ${g.is_revoked ? `revoked ${shortDate(g.revoked_at)}` : g.is_granted ? `granted ${shortDate(g.granted_at)}` : 'pending'}`),
    },
    {
      title: `Meters (${meters.items.length})`,
      lines: meters.items.map((m) => `${String((m.meter as Row | undefined)?.name ?? m.meter_id)} · consumed ${units(m.consumed_units)} · credited ${units(m.credited_units)} · balance ${units(m.balance)}`),
    },
    {
      title: `Orders (latest ${orders.items.length})`,
      lines: orders.items.map((o) => `${shortDate(o.created_at)}  ${money(o.total_amount, o.currency).padStart(12)}  ${String(o.status)} · ${String((o.product as Row | undefined)?.name ?? '')}`),
    },
  ];
}

/**
 * Customers: search by email or name (`/`, the API's `query`), `s` those with or without an active subscription;
 * Enter shows their subscriptions, grants, meters and orders; `p` opens a customer portal session and its link.
 */
export const customersConfig: ResourceConfig = {
  noun: 'customers',
  listPath: (org) => `/v1/customers/?${q(org)}&limit=100&sorting=-created_at`,
  filters: [
    { name: 'all', query: '' },
    { name: 'subscribed', query: 'active=true' },
    { name: 'not subscribed', query: 'active=false' },
  ],
  search: 'server',
  empty: 'No customers yet.',
  columns: [
    { header: 'EMAIL', width: 30, value: (c) => String(c.email) },
    { header: 'NAME', width: 18, value: (c) => String(c.name ?? '') },
    { header: 'SINCE', width: 16, value: (c) => shortDate(c.created_at) },
    { header: 'EXTERNAL ID', width: 12, value: (c) => String(c.external_id ?? '—') },
  ],
  details: (c) => ({ title: `Customer ${String(c.id)}`, load: (backend, organizationId) => customerSections(backend, organizationId, c) }),
  actions: [
    {
      key: 'p',
      label: 'portal link',
      needsRow: true,
      prepare: (c) => ({
        lines: [`Open a customer portal session for ${String(c!.email)}?`, 'The link works for an hour; whoever has it acts as this customer until then.'],
        method: 'POST',
        path: '/v1/customer-sessions/',
        body: { customer_id: c!.id },
        done: (answer) => `Portal link (until ${shortDate((answer as Row | null)?.expires_at)}): ${String((answer as Row | null)?.customer_portal_url)}`,
        link: (answer) => String((answer as Row | null)?.customer_portal_url ?? ''),
      }),
    },
  ],
};
