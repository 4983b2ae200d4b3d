import { Alert } from '../../components/Alert.js';
import { Field } from '../../components/Field.js';
import { HiddenFields } from '../../components/PostButton.js';
import { PortalLayout } from './PortalLayout.js';

interface SignInProps {
  seller: string;
  base: string;
  email?: string;
  notice?: string;
  error?: string;
  fieldError?: string;
}

/** Step one: the customer's email. The answer is the same whether or not it is a customer's. */
export function PortalSignInPage({ seller, base, email, notice, error, fieldError }: SignInProps) {
  return (
    <PortalLayout title="Sign in" seller={seller} base={base}>
      {notice ? <Alert kind="info">{notice}</Alert> : null}
      {error ? <Alert kind="error">{error}</Alert> : null}
      <p>Enter the email address you bought with. We will email you a code to sign in: no password needed.</p>
      <form method="post" action={`${base}/sign-in`} className="card" noValidate>
        <Field name="email" label="Email address" type="email" value={email} error={fieldError} autoComplete="email" required inputMode="email" spellCheck={false} autoCapitalize="none" />
        <button type="submit" className="button">
          Email me a code
        </button>
      </form>
    </PortalLayout>
  );
}

/** Step two: the code from the mail. */
export function PortalCodePage({ seller, base, email, error }: SignInProps & { email: string }) {
  return (
    <PortalLayout title="Check your email" seller={seller} base={base}>
      <Alert kind="info">{`If ${email} belongs to a customer of ${seller}, a 6-digit code is on its way. It works once, for 10 minutes.`}</Alert>
      {error ? <Alert kind="error">{error}</Alert> : null}
      <form method="post" action={`${base}/sign-in/code`} className="card" noValidate>
        <HiddenFields fields={{ email }} />
        <div className={error ? 'field field-invalid' : 'field'}>
          <label htmlFor="field-code">Code from the email</label>
          <input id="field-code" name="code" className="code-input" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]*" maxLength={8} required aria-invalid={error ? true : undefined} />
        </div>
        <button type="submit" className="button">
          Sign in
        </button>
      </form>
      <p>
        No email? Check the spelling of the address, or <a href={base}>ask for a new code</a>.
      </p>
    </PortalLayout>
  );
}

/** An address with no portal: no organization has this slug. */
export function PortalNotFoundPage() {
  return (
    <PortalLayout title="Portal not found" seller="Customer portal" base="/">
      <Alert kind="error">This customer portal link is not valid. Check that it was copied whole, or follow the link from the seller's site.</Alert>
    </PortalLayout>
  );
}
