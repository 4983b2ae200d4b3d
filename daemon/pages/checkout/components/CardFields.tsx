import type { FieldErrors } from '../../forms.js';
import { TextControl } from './Controls.js';

/**
 * The card form. Its inputs are never given a value: a card number typed once is sent to the processor and
 * not written back into any page, also when the payment fails.
 */
export function CardFields({ errors, sandbox }: { errors: FieldErrors; sandbox: boolean }) {
  return (
    <fieldset className="group">
      <legend>Card</legend>
      {sandbox ? (
        <div className="sandbox-cards" data-testid="sandbox-cards">
          <p>
            <strong>Sandbox:</strong> no real money moves. Use any future expiry date and any 3-digit security code with:
          </p>
          <ul>
            <li>
              <code>4242 4242 4242 4242</code> pays
            </li>
            <li>
              <code>4000 0000 0000 0002</code> is declined
            </li>
            <li>
              <code>4000 0000 0000 9995</code> fails for insufficient funds
            </li>
            <li>
              <code>4000 0000 0000 0341</code> pays now, is declined on renewal
            </li>
            <li>
              <code>4000 0027 6000 3184</code> asks for 3-D Secure authentication
            </li>
            <li>
              <code>4000 0000 0000 8815</code> is processing, then declined
            </li>
          </ul>
        </div>
      ) : null}
      <TextControl name="card_number" label="Card number" inputMode="numeric" autoComplete="cc-number" spellCheck={false} maxLength={23} placeholder="1234 1234 1234 1234" error={errors.card_number} required />
      <div className="row">
        <TextControl name="card_expiry" label="Expiry (MM / YY)" inputMode="numeric" autoComplete="cc-exp" spellCheck={false} maxLength={9} placeholder="MM / YY" error={errors.card_expiry} required />
        <TextControl name="card_cvc" label="Security code" inputMode="numeric" autoComplete="cc-csc" spellCheck={false} maxLength={4} placeholder="CVC" error={errors.card_cvc} required />
      </div>
    </fieldset>
  );
}
