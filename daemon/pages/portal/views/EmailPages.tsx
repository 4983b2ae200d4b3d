import { Alert } from '../../components/Alert.js';
import { Field } from '../../components/Field.js';
import { HiddenFields } from '../../components/PostButton.js';
import { PortalLayout } from './PortalLayout.js';

interface ChangeEmailProps {
  seller: string;
  base: string;
  email: string;
  allowed: boolean;
  typed?: string;
  notice?: string;
  error?: string;
  fieldError?: string;
}

/** The customer asks for a new address; a link to confirm it is mailed there (nothing changes until it is followed). */
export function PortalChangeEmailPage({ seller, base, email, allowed, typed, notice, error, fieldError }: ChangeEmailProps) {
  return (
    <PortalLayout title="Change your email address" seller={seller} base={base} email={email}>
      {notice ? <Alert kind="success">{notice}</Alert> : null}
      {error ? <Alert kind="error">{error}</Alert> : null}
      <p>Your email address is {email}: receipts and sign-in codes are sent there.</p>
      {allowed ? (
        <form method="post" action={`${base}/email`} className="card" noValidate>
          <Field name="email" label="New email address" type="email" value={typed} error={fieldError} autoComplete="email" required inputMode="email" spellCheck={false} autoCapitalize="none" />
          <p className="muted small">We email a link to the new address. Your address changes when you open it and confirm.</p>
          <button type="submit" className="button">
            Email me a link
          </button>
        </form>
      ) : (
        <p>{seller} does not let customers change their email address here. Ask them to change it for you.</p>
      )}
      <p>
        <a href={base}>Back to your account</a>
      </p>
    </PortalLayout>
  );
}

/** Where the mailed link leads: a button confirms (a mail scanner's GET changes nothing). */
export function PortalVerifyEmailPage({ seller, base, token, newEmail, error }: { seller: string; base: string; token: string; newEmail: string | null; error?: string }) {
  return (
    <PortalLayout title="Confirm your new email address" seller={seller} base={base}>
      {error ? <Alert kind="error">{error}</Alert> : null}
      {newEmail ? (
        <form method="post" action={`${base}/verify-email`} className="card">
          <HiddenFields fields={{ token }} />
          <p>
            Use <strong>{newEmail}</strong> as the email address of your {seller} account?
          </p>
          <button type="submit" className="button">
            Confirm
          </button>
        </form>
      ) : (
        <p>
          <a href={base}>Go to your account</a>
        </p>
      )}
    </PortalLayout>
  );
}
