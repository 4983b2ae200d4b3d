import type { MembershipRow, SessionRow } from '../account-data.js';
import { Alert } from '../components/Alert.js';
import { Layout } from '../components/Layout.js';
import { PostButton } from '../components/PostButton.js';
import { SessionsTable } from '../components/SessionsTable.js';
import { signInUrl, type SignedInUser } from '../session.js';

export interface AccountPageProps {
  user: SignedInUser;
  /** Null when Better Auth will not list them to this (no longer fresh) session. */
  sessions: SessionRow[] | null;
  memberships: MembershipRow[];
  notice?: { kind: 'success' | 'info' | 'error'; message: string };
}

export function AccountPage({ user, sessions, memberships, notice }: AccountPageProps) {
  const others = sessions?.filter((session) => !session.current).length ?? 0;
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
          <p className="muted">You are not a member of any organization yet.</p>
        )}
      </section>
    </Layout>
  );
}
