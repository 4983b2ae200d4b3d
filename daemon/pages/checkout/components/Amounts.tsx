import { recurrenceSuffix, renewalText, trialText, type Renewal } from '../describe.js';
import type { CheckoutWire } from '../types.js';
import { formatMoney } from '../money.js';

export interface AmountsProps {
  currency: string;
  subtotal: number;
  discount: number;
  /** null: not known yet (no billing country). */
  tax: number | null;
  total: number;
  discountLabel?: string;
  /** For a subscription: the interval, and a trial before the first charge. */
  product?: Parameters<typeof recurrenceSuffix>[0];
  trial?: ReturnType<typeof trialText>;
  /** A subscription whose discount ends: the total is the first payment, and the renewals cost this. */
  renewal?: { checkout: CheckoutWire; amounts: Renewal } | null;
  caption: string;
}

/** Subtotal, discount, tax and total, in the checkout's currency; the total row is the one a customer pays. */
export function Amounts({ currency, subtotal, discount, tax, total, discountLabel, product, trial, renewal, caption }: AmountsProps) {
  const money = (amount: number) => formatMoney(amount, currency);
  const suffix = recurrenceSuffix(product ?? null);
  return (
    <table className="amounts">
      <caption className="visually-hidden">{caption}</caption>
      <tbody>
        <tr>
          <th scope="row">Subtotal</th>
          <td data-amount="subtotal">{money(subtotal)}</td>
        </tr>
        {discount > 0 ? (
          <tr>
            <th scope="row">Discount{discountLabel ? ` (${discountLabel})` : ''}</th>
            <td data-amount="discount">−{money(discount)}</td>
          </tr>
        ) : null}
        <tr>
          <th scope="row">Tax</th>
          <td data-amount="tax">{tax === null ? <span className="muted">Calculated from your country</span> : money(tax)}</td>
        </tr>
        <tr className="total">
          <th scope="row">{renewal ? (trial ? 'First payment, after the trial' : 'Due today') : trial ? 'Total after the trial' : 'Total'}</th>
          <td data-amount="total">
            {money(total)}
            {suffix && !renewal ? <span className="muted small">{suffix}</span> : null}
          </td>
        </tr>
        {renewal ? (
          <tr>
            <th scope="row">Then</th>
            <td data-amount="renewal">{renewalText(renewal.checkout, renewal.amounts)}</td>
          </tr>
        ) : null}
        {trial ? (
          <tr>
            <th scope="row">Due today</th>
            <td data-amount="due">{money(0)}</td>
          </tr>
        ) : null}
      </tbody>
    </table>
  );
}
