import type { ReactNode } from 'react';
import { Alert } from '../components/Alert.js';
import { Field } from '../components/Field.js';
import { Layout } from '../components/Layout.js';
import { HiddenFields, PostButton } from '../components/PostButton.js';
import type { FormErrors } from '../forms.js';
import type { SignedInUser } from '../session.js';

/** A page that says one thing (a mail went out, a link worked or did not) and where to go next. */
export function NoticePage({
  title,
  kind,
  message,
  links = [],
  user,
  children,
}: {
  title: string;
  kind: 'error' | 'success' | 'info';
  message: string;
  links?: { href: string; label: string }[];
  user?: SignedInUser;
  children?: ReactNode;
}) {
  return (
    <Layout title={title} narrow user={user}>
      <Alert kind={kind}>{message}</Alert>
      {children}
      {links.map((link) => (
        <p key={link.href}>
          <a href={link.href}>{link.label}</a>
        </p>
      ))}
    </Layout>
  );
}

/** GET /forgot-password: asks for the address to send a reset link to. */
export function ForgotPasswordPage({ email = '', errors = {} }: { email?: string; errors?: FormErrors }) {
  const fields = errors.fields ?? {};
  return (
    <Layout title="Reset your password" narrow>
      {errors.form ? (
        <Alert kind="error" id="form-error">
          {errors.form}
        </Alert>
      ) : null}
      <p>Enter the email address of your account; we will send you a link to choose a new password.</p>
      <form method="post" action="/forgot-password" className="card">
        <Field name="email" label="Email address" type="email" value={email} error={fields.email} autoComplete="email" autoCapitalize="none" spellCheck={false} required />
        <div className="actions">
          <button type="submit" className="button">
            Send the link
          </button>
        </div>
      </form>
      <p>
        <a href="/sign-in">Back to sign in</a>
      </p>
    </Layout>
  );
}

/** GET /reset-password?token=…: the new password, sent with the token from the mail. */
export function ResetPasswordPage({ token, errors = {}, minPasswordLength }: { token: string; errors?: FormErrors; minPasswordLength: number }) {
  const fields = errors.fields ?? {};
  return (
    <Layout title="Choose a new password" narrow>
      {errors.form ? (
        <Alert kind="error" id="form-error">
          {errors.form}
        </Alert>
      ) : null}
      <form method="post" action="/reset-password" className="card">
        <HiddenFields fields={{ token }} />
        <Field
          name="password"
          label="New password"
          type="password"
          error={fields.password}
          hint={`At least ${minPasswordLength} characters.`}
          autoComplete="new-password"
          required
        />
        <div className="actions">
          <button type="submit" className="button">
            Set the new password
          </button>
        </div>
      </form>
      <p>
        Link expired? <a href="/forgot-password">Ask for a new one</a>
      </p>
    </Layout>
  );
}

export interface InvitationView {
  id: string;
  organizationName: string;
  inviterEmail: string;
  role: string;
  email: string;
}

/** GET /invitations/:id: who invites you where, with Accept and Decline. */
export function InvitationPage({ invitation, user }: { invitation: InvitationView; user: SignedInUser }) {
  return (
    <Layout title={`Join ${invitation.organizationName}`} narrow user={user}>
      <div className="card">
        <p>
          {invitation.inviterEmail} invited {invitation.email} to join <strong>{invitation.organizationName}</strong> as {invitation.role}.
        </p>
        <div className="actions">
          <PostButton action={`/invitations/${encodeURIComponent(invitation.id)}/accept`} label="Accept invitation" />
          <PostButton action={`/invitations/${encodeURIComponent(invitation.id)}/reject`} label="Decline" variant="secondary" />
        </div>
      </div>
    </Layout>
  );
}
