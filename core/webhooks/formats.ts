import type { EventPayload } from './outbox.js';
import type { WebhookFormat } from './schema.js';

type Data = Record<string, unknown> & { id?: unknown };
interface Summary {
  title: string;
  fields: { name: string; value: string }[];
}

const TITLES: Record<string, string> = {
  'order.created': 'New order',
  'order.paid': 'Order paid',
  'order.updated': 'Order updated',
  'order.refunded': 'Order refunded',
  'subscription.created': 'New subscription',
  'subscription.active': 'Subscription is now active',
  'subscription.canceled': 'Subscription has been canceled',
  'subscription.uncanceled': 'Subscription has been uncanceled',
  'subscription.revoked': 'Subscription has been revoked',
  'subscription.updated': 'Subscription updated',
  'subscription.past_due': 'Subscription payment is past due',
  'customer.created': 'New customer',
  'customer.updated': 'Customer updated',
  'customer.deleted': 'Customer deleted',
  'customer.state_changed': 'Customer state changed',
  'checkout.created': 'New checkout',
  'checkout.updated': 'Checkout updated',
  'checkout.expired': 'Checkout expired',
  'refund.created': 'New refund',
  'refund.updated': 'Refund updated',
  'product.created': 'New product',
  'product.updated': 'Product updated',
  'benefit.created': 'New benefit',
  'benefit.updated': 'Benefit updated',
  'benefit_grant.created': 'Benefit granted',
  'benefit_grant.updated': 'Benefit grant updated',
  'benefit_grant.revoked': 'Benefit revoked',
  'benefit_grant.cycled': 'Benefit grant cycled',
  'organization.updated': 'Organization updated',
};

/** Minor units as a price: 1999 usd → $19.99, 500 jpy → ¥500. */
export function formatMoney(amount: unknown, currency: unknown): string | undefined {
  if (typeof amount !== 'number' || typeof currency !== 'string' || !currency) return undefined;
  try {
    const format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    return format.format(amount / 10 ** digits);
  } catch {
    return `${amount} ${currency}`;
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const nested = (value: unknown, key: string): unknown => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined);

/** What a chat message says about an event: a title and a few fields people scan for. */
function summarize(payload: EventPayload, organizationName: string): Summary {
  const data = (payload.data ?? {}) as Data;
  const [family] = payload.type.split('.');
  const candidates: [string, string | undefined][] = [];
  switch (family) {
    case 'order':
      candidates.push(['Product', text(nested(data.product, 'name'))], ['Amount', formatMoney(data.total_amount, data.currency)], ['Customer', text(nested(data.customer, 'email'))]);
      break;
    case 'subscription': {
      const amount = formatMoney(data.amount, data.currency);
      candidates.push(['Product', text(nested(data.product, 'name'))], ['Amount', amount && text(data.recurring_interval) ? `${amount} / ${data.recurring_interval}` : amount], ['Customer', text(nested(data.customer, 'email'))], ['Status', text(data.status)]);
      break;
    }
    case 'customer':
      candidates.push(['Email', text(data.email)], ['Name', text(data.name)]);
      break;
    case 'checkout':
      candidates.push(['Status', text(data.status)], ['Total', formatMoney(data.total_amount, data.currency)], ['Customer', text(data.customer_email)]);
      break;
    case 'refund':
      candidates.push(['Amount', formatMoney(data.amount, data.currency)], ['Reason', text(data.reason)], ['Status', text(data.status)]);
      break;
    case 'product':
      candidates.push(['Name', text(data.name)]);
      break;
    case 'benefit':
      candidates.push(['Description', text(data.description)], ['Type', text(data.type)]);
      break;
    case 'benefit_grant':
      candidates.push(['Benefit', text(nested(data.benefit, 'description'))], ['Customer', text(nested(data.customer, 'email'))]);
      break;
    case 'organization':
      candidates.push(['Name', text(data.name)]);
      break;
  }
  const fields = candidates.filter((c): c is [string, string] => c[1] !== undefined).map(([name, value]) => ({ name, value }));
  if (typeof data.id === 'string') fields.push({ name: 'Object', value: data.id });
  fields.push({ name: 'Organization', value: organizationName });
  return { title: TITLES[payload.type] ?? payload.type, fields };
}

/** Discord's webhook body: a short message with one embed. */
function discordBody(payload: EventPayload, organizationName: string): string {
  const { title, fields } = summarize(payload, organizationName);
  return JSON.stringify({
    content: title,
    embeds: [{ title, description: `\`${payload.type}\` in ${organizationName}`, color: 0x0062ff, timestamp: payload.timestamp, fields: fields.map((f) => ({ ...f, inline: true })), footer: { text: 'Till' } }],
  });
}

/** Slack's incoming-webhook body: fallback text and one section block. */
function slackBody(payload: EventPayload, organizationName: string): string {
  const { title, fields } = summarize(payload, organizationName);
  return JSON.stringify({
    text: title,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `*${title}*\n\`${payload.type}\` in ${organizationName}` }, fields: fields.slice(0, 10).map((f) => ({ type: 'mrkdwn', text: `*${f.name}*\n${f.value}` })) }],
  });
}

/**
 * The request body an endpoint of this format receives for an event: the raw `{type, timestamp, data}` JSON
 * (data as the API serializes it) or a chat message. Rendered once, when the event reaches the endpoint.
 */
export function renderPayload(format: WebhookFormat, payload: EventPayload, organizationName: string): string {
  if (format === 'discord') return discordBody(payload, organizationName);
  if (format === 'slack') return slackBody(payload, organizationName);
  return JSON.stringify({ type: payload.type, timestamp: payload.timestamp, data: payload.data });
}
