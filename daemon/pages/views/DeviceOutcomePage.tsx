import { Alert } from '../components/Alert.js';
import { Layout } from '../components/Layout.js';
import { DEVICE_OUTCOMES, type DeviceOutcome } from '../device-outcomes.js';
import type { SignedInUser } from '../session.js';
import { formatUserCode } from '../user-code.js';
import { DeviceCodeForm } from './DeviceEntryPage.js';

/** The end of a device-code request, or why it cannot go on. */
export function DeviceOutcomePage({ user, outcome, userCode }: { user: SignedInUser; outcome: DeviceOutcome; userCode: string }) {
  const text = DEVICE_OUTCOMES[outcome];
  return (
    <Layout title={text.title} user={user} narrow>
      <Alert kind={text.tone}>{text.message}</Alert>
      <p className="muted">
        Code: <span className="code">{formatUserCode(userCode)}</span>
      </p>
      {text.retry ? <DeviceCodeForm /> : null}
    </Layout>
  );
}
