import type { SessionRow } from '../account-data.js';
import { describeUserAgent } from '../user-agent.js';
import { DateTime } from './DateTime.js';
import { PostButton } from './PostButton.js';

/** The user's live sessions, each with its own revoke button (posting the session id, never its token). */
export function SessionsTable({ sessions }: { sessions: SessionRow[] }) {
  return (
    <table>
      <caption className="visually-hidden">Your sessions</caption>
      <thead>
        <tr>
          <th scope="col">Device</th>
          <th scope="col">IP address</th>
          <th scope="col">Signed in (UTC)</th>
          <th scope="col">Expires (UTC)</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((session) => {
          const device = describeUserAgent(session.userAgent);
          return (
            <tr key={session.id} data-session-id={session.id}>
              <td>
                {device}
                {session.current ? <span className="badge">This session</span> : null}
                {session.userAgent ? <div className="muted small user-agent">{session.userAgent.slice(0, 200)}</div> : null}
              </td>
              <td>{session.ipAddress || <span className="muted">unknown</span>}</td>
              <td>
                <DateTime value={session.createdAt} />
              </td>
              <td>
                <DateTime value={session.expiresAt} />
              </td>
              <td>
                <PostButton
                  action="/account/sessions/revoke"
                  fields={{ session_id: session.id }}
                  variant="danger"
                  label={
                    <>
                      {session.current ? 'Sign out' : 'Revoke'}
                      <span className="visually-hidden"> {session.current ? 'of this session' : `session on ${device}`}</span>
                    </>
                  }
                />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
