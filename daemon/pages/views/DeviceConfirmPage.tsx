import { Layout } from '../components/Layout.js';
import { PostButton } from '../components/PostButton.js';
import type { SignedInUser } from '../session.js';
import { formatUserCode } from '../user-code.js';

export interface DeviceConfirmPageProps {
  user: SignedInUser;
  userCode: string;
  clientName: string;
  clientId: string;
  scope?: string;
}

/** Shows who asks for access to this account, and the two answers. */
export function DeviceConfirmPage({ user, userCode, clientName, clientId, scope }: DeviceConfirmPageProps) {
  return (
    <Layout title="Approve this device?" user={user} narrow>
      <div className="card">
        <p>
          <strong>{clientName}</strong> is asking to sign in as <strong>{user.email}</strong>.
        </p>
        <dl className="facts">
          <dt>Code</dt>
          <dd className="code">{formatUserCode(userCode)}</dd>
          <dt>Client</dt>
          <dd>
            {clientName} <span className="muted small">({clientId})</span>
          </dd>
          <dt>Access</dt>
          <dd>{scope ? scope : 'Full access to your account'}</dd>
        </dl>
        <p className="muted small">Only approve if the code matches the one in your terminal and you started this sign-in.</p>
        <div className="actions">
          <PostButton action="/device/approve" label="Approve" fields={{ user_code: userCode }} />
          <PostButton action="/device/deny" label="Deny" fields={{ user_code: userCode }} variant="danger" />
        </div>
      </div>
    </Layout>
  );
}
