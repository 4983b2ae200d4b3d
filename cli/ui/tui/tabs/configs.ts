import { parsePrice, pricesBody, type PriceInput } from '../../../input/price.js';
import { describePrice } from '../../../resources/specs/products.js';
import type { ApiObject } from '../../../resources/spec.js';
import { formatMoney, shortDate } from '../../record.js';
import type { TuiBackend } from '../backend.js';
import type { ResourceConfig, Row } from './ResourceTab.js';

const money = (amount: unknown, currency: unknown) => formatMoney(Number(amount ?? 0), String(currency ?? 'usd'));
const q = (organizationId: string) => `organization_id=${encodeURIComponent(organizationId)}`;
const required = (values: Record<string, string>, name: string, label: string) => {
  const value = (values[name] ?? '').trim();
  if (!value) throw new Error(`${label} is required.`);
  return value;
};

const activePrices = (p: Row) => (Array.isArray(p.prices) ? (p.prices as Row[]).filter((price) => !price.is_archived) : []);
const billingOf = (p: Row) => (p.recurring_interval ? `billed every ${Number(p.recurring_interval_count ?? 1) > 1 ? `${String(p.recurring_interval_count)} ` : ''}${String(p.recurring_interval)}` : 'one-time');

/** A price in the `--price` grammar, without the interval (the product's own); a kind it cannot spell, by its id (kept). */
export function priceSpec(price: Row): string {
  const currency = String(price.price_currency ?? 'usd');
  switch (price.amount_type) {
    case 'fixed':
      return `${String(price.price_amount)}:${currency}`;
    case 'custom':
      return `custom:${String(price.minimum_amount)}${typeof price.maximum_amount === 'number' ? `-${price.maximum_amount}` : ''}${typeof price.preset_amount === 'number' ? `@${price.preset_amount}` : ''}:${currency}`;
    case 'metered_unit':
      return `metered:${String(price.unit_amount)}:${String(price.meter_id)}:${currency}`;
    default:
      return String(price.id);
  }
}

/**
 * PATCH /v1/products/{id} with what the edit form changed. A price written as it was shown keeps its id (unchanged);
 * a new one is created; one left out is archived by the server. Nothing changed: an error, nothing is sent.
 */
export function editProduct(p: Row, values: Record<string, string>) {
  const body: Record<string, unknown> = {};
  const lines: string[] = [];
  const name = (values.name ?? '').trim();
  if (!name) throw new Error('Name is required.');
  if (name !== p.name) {
    body.name = name;
    lines.push(`Name: “${String(p.name)}” → “${name}”`);
  }
  const description = (values.description ?? '').trim();
  const before = typeof p.description === 'string' ? p.description : '';
  if (description !== before) {
    body.description = description || null;
    lines.push(description ? `Description: “${description}”` : 'Description: removed');
  }
  const current = activePrices(p);
  const shown = current.map(priceSpec);
  const specs = (values.prices ?? '').split(',').map((spec) => spec.trim()).filter(Boolean);
  if (specs.join(', ') !== shown.join(', ')) {
    if (specs.length === 0) throw new Error('A product needs at least one price.');
    const byId = new Map(shown.map((spec, index) => [spec, String(current[index]!.id)]));
    const parsed = specs.map((spec) => {
      const kept = byId.get(spec);
      return kept ? { price: { id: kept } as PriceInput, interval: null } : parsePrice(spec);
    });
    const { prices, interval } = pricesBody(parsed);
    if (interval && (interval.unit !== p.recurring_interval || interval.count !== Number(p.recurring_interval_count ?? 1))) {
      throw new Error(`A product's billing interval cannot change (this one is ${billingOf(p)}): write the prices without an interval.`);
    }
    body.prices = prices;
    const keptCount = prices.filter((price) => 'id' in price).length;
    const archived = current.length - keptCount;
    lines.push(`Prices: ${specs.join(', ')} (${keptCount} kept, ${prices.length - keptCount} new${archived > 0 ? `, ${archived} archived` : ''})`);
  }
  if (lines.length === 0) throw new Error('Nothing changed.');
  return {
    lines: [`Update product “${String(p.name)}” (${String(p.id)}):`, ...lines],
    method: 'PATCH' as const,
    path: `/v1/products/${encodeURIComponent(String(p.id))}`,
    body,
    done: `Updated “${name}”.`,
  };
}

/** Products: list with prices, create (name, prices such as 1500:usd:month), edit, archive. */
export const productsConfig: ResourceConfig = {
  noun: 'products',
  listPath: (org) => `/v1/products/?${q(org)}&limit=100&sorting=-created_at`,
  empty: 'No products yet: press n to create one.',
  columns: [
    { header: 'NAME', width: 24, value: (p) => String(p.name) },
    { header: 'PRICES', width: 22, value: (p) => (Array.isArray(p.prices) ? (p.prices as ApiObject[]).filter((price) => !price.is_archived).map(describePrice).join(', ') : '') },
    { header: 'BILLING', width: 10, value: (p) => (p.recurring_interval ? `${String(p.recurring_interval)}ly` : 'one-time') },
    { header: 'STATE', width: 8, value: (p) => (p.is_archived ? 'archived' : 'on sale') },
    { header: 'ID', width: 36, value: (p) => String(p.id) },
  ],
  actions: [
    {
      key: 'n',
      label: 'new',
      needsRow: false,
      form: () => ({
        title: 'New product',
        fields: [
          { name: 'name', label: 'Name', hint: '3–64 characters' },
          { name: 'description', label: 'Description', hint: 'optional' },
          { name: 'prices', label: 'Prices', hint: 'e.g. 1500:usd:month or 0:usd; several: comma-separated' },
        ],
      }),
      prepare(_row, values, organizationId) {
        const name = required(values, 'name', 'Name');
        const specs = required(values, 'prices', 'Prices').split(',').map((s) => s.trim()).filter(Boolean);
        const { prices, interval } = pricesBody(specs.map(parsePrice));
        const body: Record<string, unknown> = { name, organization_id: organizationId, prices };
        if (values.description?.trim()) body.description = values.description.trim();
        if (interval) {
          body.recurring_interval = interval.unit;
          body.recurring_interval_count = interval.count;
        }
        return {
          lines: [`Create product “${name}”`, `Prices: ${specs.join(', ')}`],
          method: 'POST',
          path: '/v1/products/',
          body,
          done: `Created product “${name}”.`,
        };
      },
    },
    {
      key: 'e',
      label: 'edit',
      needsRow: true,
      form: (p) => ({
        title: `Edit product “${String(p?.name)}” (${billingOf(p!)}; a kept price stays as it is, a new one is added, one left out is archived)`,
        fields: [
          { name: 'name', label: 'Name', initial: String(p?.name ?? '') },
          { name: 'description', label: 'Description', initial: typeof p?.description === 'string' ? p.description : '', hint: 'empty: none' },
          { name: 'prices', label: 'Prices', initial: activePrices(p!).map(priceSpec).join(', '), hint: 'e.g. 1500:usd, 1300:eur' },
        ],
      }),
      prepare: (row, values) => editProduct(row!, values),
    },
    {
      key: 'a',
      label: 'archive',
      needsRow: true,
      refuse: (p) => (p.is_archived ? `“${String(p.name)}” is archived already.` : undefined),
      prepare: (row) => {
        const p = row!;
        return {
        lines: [`Archive product “${String(p.name)}” (${String(p.id)})?`, 'It leaves the catalog; existing subscriptions keep running.'],
        method: 'PATCH',
        path: `/v1/products/${encodeURIComponent(String(p.id))}`,
        body: { is_archived: true },
        done: `Archived “${String(p.name)}”.`,
        };
      },
    },
  ],
};

const describeAmount = (d: Row) => (d.type === 'percentage' ? `${Number(d.basis_points) / 100}%` : money(d.amount, d.currency));

/** `500:usd` (5.00 USD off) or `10%`. */
export function parseDiscountAmount(text: string): Record<string, unknown> {
  const percent = /^(\d{1,3}(?:\.\d{1,2})?)%$/.exec(text.trim());
  if (percent) {
    const basisPoints = Math.round(Number(percent[1]) * 100);
    if (basisPoints < 1 || basisPoints > 10_000) throw new Error('A percentage is from 0.01% to 100%.');
    return { type: 'percentage', basis_points: basisPoints };
  }
  const fixed = /^(\d+):([a-z]{3})$/i.exec(text.trim());
  if (!fixed) throw new Error(`Amount “${text}”: expected AMOUNT:CURRENCY in minor units (500:usd is 5.00 USD) or a percentage (10%).`);
  return { type: 'fixed', amount: Number(fixed[1]), currency: fixed[2]!.toLowerCase() };
}

/** Discounts: list with redemptions, create (fixed or percentage, duration, code, limit), delete. */
export const discountsConfig: ResourceConfig = {
  noun: 'discounts',
  listPath: (org) => `/v1/discounts/?${q(org)}&limit=100&sorting=-created_at`,
  empty: 'No discounts yet: press n to create one.',
  columns: [
    { header: 'NAME', width: 20, value: (d) => String(d.name) },
    { header: 'CODE', width: 12, value: (d) => (typeof d.code === 'string' ? d.code : '—') },
    { header: 'AMOUNT', width: 10, value: describeAmount },
    { header: 'DURATION', width: 10, value: (d) => (d.duration === 'repeating' ? `${String(d.duration_in_months)} months` : String(d.duration)) },
    { header: 'REDEEMED', width: 8, value: (d) => `${String(d.redemptions_count ?? 0)}${d.max_redemptions ? `/${String(d.max_redemptions)}` : ''}` },
    { header: 'ENDS', width: 16, value: (d) => (d.ends_at ? shortDate(d.ends_at) : '—') },
  ],
  actions: [
    {
      key: 'n',
      label: 'new',
      needsRow: false,
      form: () => ({
        title: 'New discount',
        fields: [
          { name: 'name', label: 'Name' },
          { name: 'amount', label: 'Amount off', hint: '500:usd (5.00 USD) or 10%' },
          { name: 'duration', label: 'Duration', choices: ['once', 'forever', 'repeating'] },
          { name: 'months', label: 'Months', hint: 'repeating only' },
          { name: 'code', label: 'Code', hint: 'optional, 3–256 letters and digits' },
          { name: 'max', label: 'Max redemptions', hint: 'optional' },
        ],
      }),
      prepare(_row, values, organizationId) {
        const name = required(values, 'name', 'Name');
        const body: Record<string, unknown> = { name, organization_id: organizationId, ...parseDiscountAmount(required(values, 'amount', 'Amount off')), duration: values.duration };
        if (values.duration === 'repeating') {
          const months = Number(required(values, 'months', 'Months'));
          if (!Number.isInteger(months) || months < 1) throw new Error('Months must be a whole number from 1.');
          body.duration_in_months = months;
        }
        if (values.code?.trim()) body.code = values.code.trim();
        if (values.max?.trim()) {
          const max = Number(values.max.trim());
          if (!Number.isInteger(max) || max < 1) throw new Error('Max redemptions must be a whole number from 1.');
          body.max_redemptions = max;
        }
        const amount = describeAmount(body);
        return {
          lines: [`Create discount “${name}”: ${amount} off, ${String(body.duration)}${body.duration_in_months ? ` for ${String(body.duration_in_months)} months` : ''}`, body.code ? `Code: ${String(body.code)}` : 'No code (applied by link or API only)'],
          method: 'POST',
          path: '/v1/discounts/',
          body,
          done: `Created discount “${name}”.`,
        };
      },
    },
    {
      key: 'd',
      label: 'delete',
      needsRow: true,
      prepare: (row) => {
        const d = row!;
        return {
        lines: [`Delete discount “${String(d.name)}” (${describeAmount(d)} off)?`, 'It can no longer be redeemed; past redemptions keep their price.'],
        method: 'DELETE',
        path: `/v1/discounts/${encodeURIComponent(String(d.id))}`,
        done: `Deleted “${String(d.name)}”.`,
        };
      },
    },
  ],
};

/** Webhooks: endpoints with their health; create, rotate the signing secret, delete. */
export const webhooksConfig: ResourceConfig = {
  noun: 'endpoints',
  caption: 'Webhook endpoints (d: their recent deliveries)',
  listPath: (org) => `/v1/webhooks/endpoints?${q(org)}&limit=100`,
  empty: 'No webhook endpoints yet: press n to create one.',
  columns: [
    { header: 'URL', width: 36, value: (e) => String(e.url) },
    { header: 'FORMAT', width: 7, value: (e) => String(e.format) },
    { header: 'EVENTS', width: 8, value: (e) => (Array.isArray(e.events) ? String(e.events.length) : '') },
    { header: 'HEALTH', width: 24, value: (e) => (e.enabled ? 'enabled' : `disabled${e.disabled_reason ? ` (${String(e.disabled_reason)})` : ''}`) },
  ],
  actions: [
    {
      key: 'n',
      label: 'new',
      needsRow: false,
      form: () => ({
        title: 'New webhook endpoint',
        fields: [
          { name: 'url', label: 'URL', hint: 'https://…' },
          { name: 'events', label: 'Events', hint: 'comma-separated, e.g. order.paid,subscription.created' },
          { name: 'format', label: 'Format', choices: ['raw', 'discord', 'slack'] },
        ],
      }),
      prepare(_row, values, organizationId) {
        const url = required(values, 'url', 'URL');
        const events = (values.events ?? '').split(',').map((e) => e.trim()).filter(Boolean);
        return {
          lines: [`Create a ${String(values.format)} endpoint for ${url}`, events.length ? `Events: ${events.join(', ')}` : 'Events: none yet (add them later)'],
          method: 'POST',
          path: '/v1/webhooks/endpoints',
          body: { url, events, format: values.format, organization_id: organizationId },
          done: (answer) => `Created the endpoint; its signing secret is ${String((answer as Row | null)?.secret ?? '(hidden)')}`,
        };
      },
    },
    {
      key: 's',
      label: 'rotate secret',
      needsRow: true,
      prepare: (row) => {
        const e = row!;
        return {
          lines: [`Replace the signing secret of ${String(e.url)}?`, 'Deliveries are signed with the new secret at once: update the receiver too.'],
          method: 'PATCH',
          path: `/v1/webhooks/endpoints/${encodeURIComponent(String(e.id))}/secret`,
          done: (answer) => `New signing secret: ${String((answer as Row | null)?.secret ?? '(hidden)')}`,
        };
      },
    },
    {
      key: 'x',
      label: 'delete',
      needsRow: true,
      prepare: (row) => {
        const e = row!;
        return {
          lines: [`Delete the endpoint ${String(e.url)}?`, 'It gets no more deliveries.'],
          method: 'DELETE',
          path: `/v1/webhooks/endpoints/${encodeURIComponent(String(e.id))}`,
          done: `Deleted the endpoint ${String(e.url)}.`,
        };
      },
    },
  ],
};

const eventOf = (d: Row) => (d.webhook_event ?? {}) as Row;

/** The organization's endpoints (the deliveries list and the Events tab's resend choose among them). */
export async function organizationEndpoints(backend: TuiBackend, organizationId: string): Promise<Row[]> {
  return (await backend.request<{ items: Row[] }>('GET', `/v1/webhooks/endpoints?${q(organizationId)}&limit=100`)).items;
}

/** Recent deliveries to the organization's endpoints, with status and timing; redeliver one's event to its endpoint. */
export const deliveriesConfig: ResourceConfig = {
  noun: 'deliveries',
  caption: 'Recent deliveries to this organization’s endpoints (d: back to the endpoints)',
  // The deliveries API lists every organization the caller reads; this one's are those to its endpoints.
  async load(backend, organizationId) {
    const endpoints = await organizationEndpoints(backend, organizationId);
    if (endpoints.length === 0) return [];
    const query = endpoints.map((endpoint) => `endpoint_id=${encodeURIComponent(String(endpoint.id))}`).join('&');
    return (await backend.request<{ items: Row[] }>('GET', `/v1/webhooks/deliveries?${query}&limit=100`)).items;
  },
  empty: 'No deliveries yet.',
  columns: [
    { header: 'TIME', width: 16, value: (d) => shortDate(d.created_at) },
    { header: 'EVENT', width: 24, value: (d) => String(eventOf(d).type ?? '') },
    { header: 'STATUS', width: 8, value: (d) => (d.succeeded ? `ok ${String(d.http_code ?? '')}` : `✗ ${String(d.http_code ?? 'ERR')}`) },
    { header: 'MS', width: 6, value: (d) => String(d.duration_ms ?? '') },
    { header: 'TRY', width: 3, value: (d) => String(d.attempt ?? '') },
    { header: 'ENDPOINT', width: 20, value: (d) => String(d.webhook_endpoint_id ?? '') },
  ],
  actions: [
    {
      key: 'R',
      label: 'redeliver',
      needsRow: true,
      prepare: (row) => {
        const d = row!;
        const event = eventOf(d);
        return {
          lines: [`Send ${String(event.type)} (${String(event.id)}) again to endpoint ${String(d.webhook_endpoint_id)}?`, 'Same webhook-id and body: a receiver that deduplicates ignores it.'],
          method: 'POST',
          path: `/v1/webhooks/events/${encodeURIComponent(String(event.id))}/redeliver?endpoint_id=${encodeURIComponent(String(d.webhook_endpoint_id))}`,
          done: `Queued ${String(event.type)} for redelivery.`,
        };
      },
    },
  ],
};
