import { Alert } from '../../components/Alert.js';
import { HiddenFields } from '../../components/PostButton.js';
import type { FormErrors } from '../../forms.js';
import { AddressFields } from '../components/AddressFields.js';
import { Amounts } from '../components/Amounts.js';
import { PaymentFields } from '../components/PaymentFields.js';
import { CheckoutLayout } from '../components/CheckoutLayout.js';
import { CheckboxControl, TextControl } from '../components/Controls.js';
import { CustomFields } from '../components/CustomFields.js';
import { activePrice, discountText, payLabel, priceText, trialText, type Renewal } from '../describe.js';
import { formatMoney, toMajorInput } from '../money.js';
import type { CheckoutWire } from '../types.js';
import type { PaymentModeName } from '../../../payment-mode.js';

export interface CheckoutPageProps {
  checkout: CheckoutWire;
  /** Where the form posts: the checkout's own path. */
  action: string;
  /** What the customer typed last time (never the card); absent, the checkout's saved values show. */
  typed?: Record<string, string>;
  errors?: FormErrors;
  /** A fixed message after a change, e.g. the discount was applied. */
  notice?: string;
  /**
   * How the seller takes money: the sandbox (its test cards are listed), Stripe (its Payment Element collects the
   * card), or not configured (the checkout cannot be paid).
   */
  mode: PaymentModeName;
  /** Stripe's publishable key, for Stripe.js (Stripe modes only). */
  publishableKey?: string | null;
  /** What renewals cost when the subscription's discount ends (see discountEnds). */
  renewal?: Renewal | null;
}

/** The hosted checkout: one form, every button a POST, so it works with JavaScript off. */
export function CheckoutPage({ checkout, action, typed, errors = {}, notice, mode, publishableKey, renewal }: CheckoutPageProps) {
  const fields = errors.fields ?? {};
  const product = checkout.product;
  const value = (name: string, saved: string | null | undefined) => typed?.[name] ?? saved ?? '';
  const recurring = product?.is_recurring ?? false;
  const trial = recurring ? trialText(checkout) : null;
  const hasErrors = Boolean(errors.form) || Object.keys(fields).length > 0;
  return (
    <CheckoutLayout title={product?.name ?? 'Checkout'} seller={checkout.organization.name} mode={mode}>
      {errors.form && Object.keys(fields).length === 0 ? (
        <Alert kind="error" id="form-error">
          {errors.form}
        </Alert>
      ) : hasErrors ? (
        <ErrorSummary message={errors.form} fields={fields} />
      ) : notice ? (
        <Alert kind="info">{notice}</Alert>
      ) : null}
      {checkout.return_url ? (
        <p>
          <a href={checkout.return_url}>← Back to {checkout.organization.name}</a>
        </p>
      ) : null}
      <div className="checkout-grid">
        <section className="summary" aria-label="What you are buying">
          {product?.description ? <p className="description">{product.description}</p> : null}
          <p className="price" data-testid="price">
            {priceText(checkout.product_price, product)}
          </p>
          {trial ? <p>Free for {trial}, then billed{` ${priceText(checkout.product_price, product)}`}.</p> : null}
          {product && product.benefits.length > 0 ? (
            <>
              <h2>Included</h2>
              <ul className="benefits">
                {product.benefits.map((benefit) => (
                  <li key={benefit.id}>{benefit.description}</li>
                ))}
              </ul>
            </>
          ) : null}
          <Amounts
            caption="Order summary"
            currency={checkout.currency}
            subtotal={checkout.amount}
            discount={checkout.discount_amount}
            tax={checkout.tax_amount}
            total={checkout.total_amount}
            discountLabel={checkout.discount ? (checkout.discount.code ?? checkout.discount.name) : undefined}
            product={product}
            trial={trial}
            renewal={renewal ? { checkout, amounts: renewal } : null}
          />
        </section>

        <form method="post" action={action} className="card" noValidate aria-describedby={hasErrors ? 'form-error' : undefined}>
          {/* The first submit button is the one Enter presses: it saves and recalculates, it never pays. */}
          <button type="submit" name="intent" value="update" className="default-submit" tabIndex={-1} aria-hidden="true">
            Update
          </button>
          <HiddenFields fields={{ expected_total: String(checkout.total_amount) }} />

          {checkout.products.length > 1 ? (
            <fieldset className="group" id="field-product_id">
              <legend>Choose an option</legend>
              {fields.product_id ? <p className="field-error">{fields.product_id}</p> : null}
              {checkout.products.map((option) => {
                const price = activePrice(option, checkout.currency);
                const id = `product-${option.id}`;
                return (
                  <div className="choice" key={option.id}>
                    <input type="radio" id={id} name="product_id" value={option.id} defaultChecked={value('product_id', checkout.product_id) === option.id} />
                    <label htmlFor={id}>
                      <strong>{option.name}</strong> <span className="muted">{priceText(price, option)}</span>
                    </label>
                  </div>
                );
              })}
              <button type="submit" name="intent" value="update" className="button button-secondary" formNoValidate>
                Update total
              </button>
            </fieldset>
          ) : null}

          {checkout.product_price?.amount_type === 'custom' ? (
            <fieldset className="group">
              <legend>Your price</legend>
              <TextControl
                name="amount"
                label={`Amount (${checkout.currency.toUpperCase()})`}
                value={value('amount', toMajorInput(checkout.amount, checkout.currency))}
                inputMode="decimal"
                autoComplete="off"
                error={fields.amount}
                hint={customAmountHint(checkout)}
                required
              />
            </fieldset>
          ) : null}

          <fieldset className="group">
            <legend>Contact</legend>
            <TextControl
              name="customer_email"
              label="Email address"
              type="email"
              value={value('customer_email', checkout.customer_email)}
              error={fields.customer_email}
              autoComplete="email"
              inputMode="email"
              spellCheck={false}
              hint="Your order, subscription and benefits are kept under this address."
              required
            />
            <TextControl name="customer_name" label="Name (optional)" value={value('customer_name', checkout.customer_name)} error={fields.customer_name} autoComplete="name" maxLength={256} />
            <div className="business">
              <CheckboxControl
                name="is_business_customer"
                label="I'm buying for a business"
                checked={typed ? typed.is_business_customer === 'on' : (checkout.is_business_customer ?? false)}
                hint="The invoice then carries the business name, tax ID and full address."
              />
              <div className="business-fields">
                <TextControl
                  name="customer_billing_name"
                  label="Business name"
                  value={value('customer_billing_name', checkout.customer_billing_name)}
                  error={fields.customer_billing_name}
                  autoComplete="organization"
                  maxLength={256}
                />
                <TextControl
                  name="customer_tax_id"
                  label="Tax ID (optional)"
                  value={value('customer_tax_id', checkout.customer_tax_id)}
                  error={fields.customer_tax_id}
                  autoComplete="off"
                  spellCheck={false}
                  maxLength={64}
                  hint="A VAT or other tax number, e.g. FR61954506077."
                />
              </div>
            </div>
          </fieldset>

          <AddressFields checkout={checkout} typed={typed} errors={fields} />
          <CustomFields checkout={checkout} typed={typed} errors={fields} />

          {checkout.allow_discount_codes && checkout.is_discount_applicable ? (
            <fieldset className="group">
              <legend>Discount</legend>
              {checkout.discount ? (
                <div className="discount-applied" data-testid="discount-applied" id="field-discount_code">
                  <p>
                    {checkout.discount.code ? <strong>{checkout.discount.code}</strong> : <strong>{checkout.discount.name}</strong>}: {discountText(checkout.discount, recurring)}
                  </p>
                  <button type="submit" name="intent" value="remove_discount" className="button button-link" formNoValidate>
                    Remove discount
                  </button>
                  {fields.discount_code ? (
                    <p id="field-discount_code-error" className="field-error">
                      {fields.discount_code}
                    </p>
                  ) : null}
                </div>
              ) : (
                <div className="discount-entry">
                  <TextControl name="discount_code" label="Discount code" value={value('discount_code', '')} error={fields.discount_code} autoComplete="off" spellCheck={false} maxLength={256} />
                  <button type="submit" name="intent" value="apply_discount" className="button button-secondary" formNoValidate>
                    Apply
                  </button>
                </div>
              )}
            </fieldset>
          ) : null}

          {checkout.is_payment_form_required ? <PaymentFields errors={fields} mode={mode} checkout={checkout} publishableKey={publishableKey ?? null} /> : null}

          {checkout.is_payment_form_required && mode === 'not_configured' ? null : (
            <button type="submit" name="intent" value="pay" className="button pay" data-pay>
              {payLabel(checkout)}
            </button>
          )}
          {recurring && checkout.is_payment_form_required ? (
            <p className="muted small">Your card is saved to renew the subscription{recurringNote(checkout)}. You can cancel at any time.</p>
          ) : null}
        </form>
      </div>
    </CheckoutLayout>
  );
}

/**
 * Every field error, each a link to its input, so none is missed (a field may sit far down the form). The input's
 * id is `field-<name>` (Controls.tsx); the discount and product errors point at their sections.
 */
function ErrorSummary({ message, fields }: { message?: string; fields: Partial<Record<string, string>> }) {
  return (
    <div id="form-error" className="alert alert-error" role="alert">
      <p>{message ?? 'Some details need your attention:'}</p>
      <ul>
        {Object.entries(fields).map(([name, text]) => (
          <li key={name}>
            <a href={`#field-${name.replace(/[^a-zA-Z0-9_-]/g, '_')}`}>{text}</a>
          </li>
        ))}
      </ul>
    </div>
  );
}

function customAmountHint(checkout: CheckoutWire): string | undefined {
  const price = checkout.product_price;
  if (!price) return undefined;
  const min = price.minimum_amount ?? null;
  const max = price.maximum_amount ?? null;
  const money = (amount: number) => formatMoney(amount, checkout.currency);
  if (min !== null && max !== null) return `Between ${money(min)} and ${money(max)}.`;
  if (min !== null) return `At least ${money(min)}.`;
  if (max !== null) return `At most ${money(max)}.`;
  return undefined;
}

function recurringNote(checkout: CheckoutWire): string {
  const interval = checkout.product?.recurring_interval;
  return interval ? ` and charged each ${interval}` : '';
}
