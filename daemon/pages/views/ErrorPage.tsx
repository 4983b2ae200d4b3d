import { Alert } from '../components/Alert.js';
import { Layout } from '../components/Layout.js';

/** A failure with nothing to retry on the page itself: forbidden origin, body too large, a bug. */
export function ErrorPage({ title, message, requestId }: { title: string; message: string; requestId?: string }) {
  return (
    <Layout title={title} narrow>
      <Alert kind="error">{message}</Alert>
      {requestId ? <p className="muted small">Request id: {requestId}</p> : null}
      <p>
        <a href="/">Back to Till</a>
      </p>
    </Layout>
  );
}
