import { Field } from '../components/Field.js';
import { Layout } from '../components/Layout.js';
import type { SignedInUser } from '../session.js';

export interface DeviceEntryPageProps {
  user: SignedInUser;
  value?: string;
  error?: string;
}

/** Asks for the code the terminal shows; a GET form, so the result page is the same URL the CLI opens. */
export function DeviceEntryPage({ user, value, error }: DeviceEntryPageProps) {
  return (
    <Layout title="Connect a device" user={user} narrow>
      <DeviceCodeForm value={value} error={error} />
    </Layout>
  );
}

export function DeviceCodeForm({ value, error }: { value?: string; error?: string }) {
  return (
    <form method="get" action="/device" className="card">
      <Field
        name="user_code"
        label="Code shown in your terminal"
        hint="For example ABCD-1234. Case and the dash do not matter."
        value={value}
        error={error}
        autoComplete="off"
        autoCapitalize="characters"
        spellCheck={false}
        required
      />
      <div className="actions">
        <button type="submit" className="button">
          Continue
        </button>
      </div>
    </form>
  );
}
