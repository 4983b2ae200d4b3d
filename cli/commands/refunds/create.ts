import { CliError, EXIT } from '../../errors.js';
import { canPrompt, missingArgument, openPrompter } from '../../input/prompt.js';
import type { Env, Streams } from '../../output.js';
import { metadata } from '../../resources/fields.js';
import { done } from '../../resources/item.js';
import { openSession } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { formatMoney } from '../../ui/record.js';

export const REFUND_REASONS = ['customer_request', 'duplicate', 'fraudulent', 'service_disruption', 'satisfaction_guarantee', 'dispute_prevention', 'other'] as const;

export interface RefundOptions {
  server?: string;
  json?: boolean;
  order?: string;
  amount?: string;
  reason?: string;
  comment?: string;
  revokeBenefits?: boolean;
  metadata?: string[];
  yes?: boolean;
}

const FLAG_OF: Record<string, string> = { order_id: '--order', amount: '--amount', reason: '--reason', comment: '--comment', revoke_benefits: '--revoke-benefits', metadata: '--metadata' };

/**
 * `--amount`: minor units (500 is 5.00 USD), `all` for everything still refundable, or a percentage of what the order
 * cost before tax (`50%`: half of `net_amount`, rounded down to the minor unit).
 */
export function parseAmount(value: string, order: { refundable: number; net: number }): number {
  const text = value.trim().toLowerCase();
  if (text === 'all') return order.refundable;
  const percent = /^(\d{1,3}(?:\.\d{1,2})?)%$/.exec(text);
  if (percent && Number(percent[1]) > 0 && Number(percent[1]) <= 100) return Math.max(1, Math.floor((order.net * Number(percent[1])) / 100));
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1) {
    throw new CliError('INVALID_FLAG', `--amount "${value}": expected a whole number of minor units (500 is 5.00 USD), a percentage of the order (50%) or "all".`, EXIT.invalid);
  }
  return Number(text);
}

/** The tax that goes back with `amount`, as the server computes it (in proportion; the rest with the last refund). */
function taxFor(order: ApiObject, amount: number): number {
  const refundable = Number(order.refundable_amount);
  if (amount >= refundable) return Number(order.refundable_tax_amount);
  const net = Number(order.net_amount);
  return net > 0 ? Math.min(Number(order.refundable_tax_amount), Math.round((amount * Number(order.tax_amount)) / net)) : 0;
}

/**
 * `till refunds create --order ID --amount N|all --reason R`: shows what the order still has to refund and, on a
 * terminal, asks before refunding (off a terminal --yes is required); asks for what is missing on a terminal.
 */
export async function createRefund(options: RefundOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const interactive = canPrompt(streams);
  const missing = [...(options.order ? [] : ['--order']), ...(options.amount ? [] : ['--amount']), ...(options.reason ? [] : ['--reason'])];
  if (missing.length && !interactive) throw missingArgument(missing, 'create a refund');
  if (options.reason && !(REFUND_REASONS as readonly string[]).includes(options.reason)) {
    throw new CliError('INVALID_FLAG', `--reason "${options.reason}": expected one of ${REFUND_REASONS.join(', ')}.`, EXIT.invalid);
  }
  const prompter = interactive ? await openPrompter(streams) : undefined;

  const orderId = options.order ?? (await prompter!.text('Order id', { validate: (value) => (value.trim() ? true : 'An order id is needed') })).trim();
  const order = await session.api.request<ApiObject>('GET', `/v1/orders/${encodeURIComponent(orderId)}`);
  const currency = String(order.currency);
  const money = (amount: number) => formatMoney(amount, currency);
  const refundable = Number(order.refundable_amount);
  const refundableTax = Number(order.refundable_tax_amount);
  const label = `order ${String(order.invoice_number ?? order.id)} (${String(order.description ?? '')}, ${String(order.status).replace('_', ' ')})`;
  if (refundable <= 0) {
    throw new CliError('NOTHING_TO_REFUND', `Nothing is left to refund on ${label}: ${money(Number(order.refunded_amount))} of ${money(Number(order.net_amount))} already refunded.`, EXIT.invalid);
  }
  session.out.note(`Refundable on ${label}: ${money(refundable)} + ${money(refundableTax)} tax.`);

  const amount = parseAmount(
    options.amount ??
      (await prompter!.text(`Amount to refund, in minor units or a percentage (or "all" for ${money(refundable)})`, {
        default: 'all',
        // Checked as the answer is typed, as the price prompt checks a price: a malformed amount, or more than is left.
        validate: (value) => {
          let asked: number;
          try {
            asked = parseAmount(value, { refundable, net: Number(order.net_amount) });
          } catch {
            return 'A whole number of minor units, a percentage (50%), or "all"';
          }
          return asked <= refundable ? true : `${money(asked)} is more than the ${money(refundable)} refundable`;
        },
      })),
    { refundable, net: Number(order.net_amount) },
  );
  const reason = options.reason ?? (await prompter!.select('Reason', REFUND_REASONS.map((value) => ({ value, name: value.replace(/_/g, ' ') }))));

  if (!options.yes) {
    if (!interactive) throw new CliError('CONFIRMATION_REQUIRED', 'Refusing to refund without --yes: there is no terminal to ask on.', EXIT.usage, 'Add --yes to refund.');
    const tax = taxFor(order, amount);
    const question = `Refund ${money(amount)}${tax > 0 ? ` + ${money(tax)} tax` : ''} of ${money(refundable)} refundable to ${String((order.customer as ApiObject | undefined)?.email ?? 'the customer')}?`;
    if (!(await prompter!.confirm(question))) throw new CliError('CANCELLED', 'Nothing was refunded.', EXIT.error);
  }

  const body: Record<string, unknown> = { order_id: String(order.id), amount, reason };
  if (options.comment !== undefined) body.comment = options.comment;
  if (options.revokeBenefits) body.revoke_benefits = true;
  if (options.metadata?.length && metadata.repeatable) metadata.apply(options.metadata, body, 'create');
  const refund = await session.api.request<ApiObject>('POST', '/v1/refunds/', { body, flagOf: (field) => FLAG_OF[field] });
  done(session, refund, `Refunded ${money(Number(refund.amount))} + ${money(Number(refund.tax_amount))} tax on ${label} (refund ${String(refund.id)}).`);
  return EXIT.ok;
}
