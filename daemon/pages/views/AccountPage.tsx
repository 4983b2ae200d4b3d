import { CREDENTIAL_PROVIDER_ID, providerName, type SignInProvider } from '../../../core/auth/social.js';
import type { LinkedAccountRow, MembershipRow, SessionRow } from '../account-data.js';
import { Alert } from '../components/Alert.js';
import { DateTime } from '../components/DateTime.js';
import { Field } from '../components/Field.js';
import type { FormErrors } from '../forms.js';
import { Layout } from '../components/Layout.js';
import { NAME_LENGTH, SLUG_LENGTH } from '../../../core/billing/organizations/slug.js';
import { PostButton } from '../components/PostButton.js';
import { SessionsTable } from '../components/SessionsTable.js';
import { signInUrl, type SignedInUser } from '../session.js';

export interface AccountPageProps {
  user: SignedInUser;
  /** Null when Better Auth will not list them to this (no longer fresh) session. */
  sessions: SessionRow[] | null;
  memberships: MembershipRow[];
  /** The user's sign-in methods (password, linked providers). */
  accounts: LinkedAccountRow[];
  /** The providers this daemon is configured for. */
  providers: SignInProvider[];
  notice?: { kind: 'success' | 'info' | 'error'; message: string };
  /** The change-of-email form as last sent, with what was wrong. */
  emailForm?: { value: string; errors: FormErrors };
  deleteForm?: { errors: FormErrors };
  /** The new-organization form as last sent, with what was wrong. */
  organizationForm?: { values: { name: string; slug: string }; errors: FormErrors };
}

export function AccountPage({ user, sessions, memberships, accounts, providers, notice, emailForm, deleteForm, organizationForm }: AccountPageProps) {
  const others = sessions?.filter((session) => !session.current).length ?? 0;
  const linkable = providers.filter((provider) => !accounts.some((account) => account.providerId === provider.id));
  const hasPassword = accounts.some((account) => account.providerId === CREDENTIAL_PROVIDER_ID);
  return (
    <Layout title="Your account" user={user}>
      {notice ? <Alert kind={notice.kind}>{notice.message}</Alert> : null}
      <section aria-labelledby="profile-heading" className="card">
        <h2 id="profile-heading" className="visually-hidden">
          Profile
        </h2>
        <dl className="facts">
          <dt>Name</dt>
          <dd>{user.name}</dd>
          <dt>Email</dt>
          <dd>{user.email}</dd>
          <dt>Role</dt>
          <dd>{user.role}</dd>
        </dl>
      </section>

      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">Sessions</h2>
        {sessions ? (
          <>
            <SessionsTable sessions={sessions} />
            {others > 0 ? (
              <div className="actions">
                <PostButton action="/account/sessions/revoke-others" label="Sign out everywhere else" variant="danger" />
              </div>
            ) : null}
          </>
        ) : (
          <p>
            For your safety, sessions are listed only shortly after signing in.{' '}
            <a href={signInUrl('/account')}>Sign in again</a> to see and revoke them.
          </p>
        )}
      </section>

      <section aria-labelledby="methods-heading">
        <h2 id="methods-heading">Sign-in methods</h2>
        <table>
          <caption className="visually-hidden">How you can sign in</caption>
          <thead>
            <tr>
              <th scope="col">Method</th>
              <th scope="col">Added</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((account) => {
              const name = providerName(account.providerId, providers);
              return (
                <tr key={account.id}>
                  <td>{name}</td>
                  <td>
                    <DateTime value={account.createdAt} />
                  </td>
                  <td>
                    {/* The last way to sign in is never offered for removal: it would lock the account out. */}
                    {accounts.length > 1 ? (
                      <PostButton action="/account/accounts/unlink" fields={{ account_id: account.id }} label={`Unlink ${name}`} variant="secondary" />
                    ) : (
                      <span className="muted">Your only sign-in method</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {linkable.length > 0 ? (
          <div className="actions">
            {linkable.map((provider) => (
              <PostButton key={provider.id} action="/account/accounts/link" fields={{ provider: provider.id }} label={`Link ${provider.name}`} />
            ))}
          </div>
        ) : null}
      </section>

      <section aria-labelledby="email-heading">
        <h2 id="email-heading">Email address</h2>
        {emailForm?.errors.form ? (
          <Alert kind="error" id="email-form-error">
            {emailForm.errors.form}
          </Alert>
        ) : null}
        <form method="post" action="/account/email" className="card" aria-describedby={emailForm?.errors.form ? 'email-form-error' : undefined}>
          <Field
            name="newEmail"
            label="New email address"
            type="email"
            value={emailForm?.value ?? ''}
            error={emailForm?.errors.fields?.newEmail}
            hint={`Now ${user.email}. A link confirms the change: sent to this address first when it is verified, then to the new one.`}
            autoComplete="email"
            autoCapitalize="none"
            spellCheck={false}
            required
          />
          <div className="actions">
            <button type="submit" className="button">
              Change email address
            </button>
          </div>
        </form>
      </section>

      <section aria-labelledby="organizations-heading">
        <h2 id="organizations-heading">Organizations</h2>
        {memberships.length > 0 ? (
          <table>
            <caption className="visually-hidden">Your organizations</caption>
            <thead>
              <tr>
                <th scope="col">Organization</th>
                <th scope="col">Slug</th>
                <th scope="col">Your role</th>
              </tr>
            </thead>
            <tbody>
              {memberships.map((membership) => (
                <tr key={membership.id}>
                  <td>{membership.name}</td>
                  <td>
                    <code>{membership.slug}</code>
                  </td>
                  <td>{membership.role}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">You are not a member of any organization yet: create one below, or accept an invitation.</p>
        )}
        <h3 id="new-organization-heading">New organization</h3>
        {organizationForm?.errors.form ? (
          <Alert kind="error" id="organization-form-error">
            {organizationForm.errors.form}
          </Alert>
        ) : null}
        <form
          method="post"
          action="/account/organizations"
          className="card"
          aria-labelledby="new-organization-heading"
          aria-describedby={organizationForm?.errors.form ? 'organization-form-error' : undefined}
        >
          <Field
            name="name"
            label="Name"
            value={organizationForm?.values.name ?? ''}
            error={organizationForm?.errors.fields?.name}
            hint={`${NAME_LENGTH.min}–${NAME_LENGTH.max} characters, shown to your customers.`}
            autoComplete="organization"
            required
          />
          <Field
            name="slug"
            label="Slug (optional)"
            value={organizationForm?.values.slug ?? ''}
            error={organizationForm?.errors.fields?.slug}
            hint={`Used in URLs and by the CLI (--org). Left empty, it is made from the name: "Acme Tools" becomes acme-tools. ${SLUG_LENGTH.min}–${SLUG_LENGTH.max} lowercase letters, digits and hyphens.`}
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
          />
          <div className="actions">
            <button type="submit" className="button">
              Create organization
            </button>
          </div>
        </form>
      </section>

      <section aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete account</h2>
        {deleteForm?.errors.form ? (
          <Alert kind="error" id="delete-form-error">
            {deleteForm.errors.form}
          </Alert>
        ) : null}
        <form method="post" action="/account/delete" className="card" aria-describedby={deleteForm?.errors.form ? 'delete-form-error' : undefined}>
          {hasPassword ? (
            <Field
              name="password"
              label="Your password"
              type="password"
              error={deleteForm?.errors.fields?.password}
              hint="Your account, its sessions and its memberships are deleted at once. This cannot be undone."
              autoComplete="current-password"
              required
            />
          ) : (
            <p className="hint">We email you a link; your account is deleted when you follow it. This cannot be undone.</p>
          )}
          <div className="actions">
            <button type="submit" className="button button-danger">
              {hasPassword ? 'Delete my account' : 'Email me a link to delete my account'}
            </button>
          </div>
        </form>
      </section>
    </Layout>
  );
}
