import { Text } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { messageOf, type StreamEvent, type TuiBackend } from '../backend.js';
import { Confirm } from '../components/Confirm.js';
import { Picker } from '../components/Picker.js';
import { useTheme } from '../theme.js';
import { organizationEndpoints } from './configs.js';
import type { Row } from './ResourceTab.js';

export interface Notice {
  text: string;
  error: boolean;
}

export interface ResendProps {
  event: StreamEvent;
  backend: TuiBackend;
  organizationId: string;
  height: number;
  /** Back to the list (a notice says what happened, and later how the delivery went). */
  close(): void;
  report(notice: Notice): void;
  /** How long to watch for the delivery's outcome, and how often (tests shorten them). */
  watch?: { timeoutMs: number; everyMs: number };
}

type Stage = { kind: 'loading' } | { kind: 'choose'; endpoints: Row[] } | { kind: 'confirm'; endpoint: Row } | { kind: 'sending' };

interface Delivery {
  id: string;
  succeeded?: boolean;
  http_code?: number | null;
  duration_ms?: number | null;
  webhook_event?: { id?: string };
}

const deliveriesOf = async (backend: TuiBackend, endpointId: string, eventId: string) =>
  (await backend.request<{ items: Delivery[] }>('GET', `/v1/webhooks/deliveries?endpoint_id=${encodeURIComponent(endpointId)}&limit=100`)).items.filter(
    (delivery) => delivery.webhook_event?.id === eventId,
  );

/**
 * `r` on the Events tab: choose one of the organization's endpoints, confirm, then POST
 * /v1/webhooks/events/{id}/redeliver?endpoint_id= (same webhook-id and body); the notice follows the delivery it
 * queued until the endpoint answers.
 */
export function Resend({ event, backend, organizationId, height, close, report, watch = { timeoutMs: 30_000, everyMs: 500 } }: ResendProps) {
  const theme = useTheme();
  const [stage, setStage] = useState<Stage>({ kind: 'loading' });
  const sent = useRef(false);

  useEffect(() => {
    let current = true;
    organizationEndpoints(backend, organizationId)
      .then((endpoints) => {
        if (!current) return;
        if (endpoints.length === 0) {
          report({ text: 'This organization has no webhook endpoint to resend to (create one on the Webhooks tab).', error: true });
          return close();
        }
        setStage({ kind: 'choose', endpoints });
      })
      .catch((error: unknown) => {
        if (!current) return;
        report({ text: `Could not load the endpoints: ${messageOf(error)}`, error: true });
        close();
      });
    return () => void (current = false);
  }, [backend, organizationId]);

  const send = async (endpoint: Row) => {
    if (sent.current) return;
    sent.current = true;
    setStage({ kind: 'sending' });
    const endpointId = String(endpoint.id);
    const url = String(endpoint.url);
    let before: Set<string>;
    try {
      // The deliveries of this event to this endpoint so far: the one the redelivery makes is the new one.
      before = new Set((await deliveriesOf(backend, endpointId, event.id)).map((delivery) => delivery.id));
      await backend.request('POST', `/v1/webhooks/events/${encodeURIComponent(event.id)}/redeliver?endpoint_id=${encodeURIComponent(endpointId)}`);
    } catch (error) {
      report({ text: messageOf(error), error: true });
      return close();
    }
    report({ text: `Queued ${event.type} for ${url}; waiting for its answer…`, error: false });
    close();
    const deadline = Date.now() + watch.timeoutMs;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, watch.everyMs));
      try {
        const fresh = (await deliveriesOf(backend, endpointId, event.id)).find((delivery) => !before.has(delivery.id));
        if (fresh) {
          const timing = fresh.duration_ms == null ? '' : ` in ${fresh.duration_ms} ms`;
          return report(
            fresh.succeeded
              ? { text: `Resent ${event.type}: ${fresh.http_code ?? 'ok'}${timing} from ${url}`, error: false }
              : { text: `Resent ${event.type}: failed (${fresh.http_code ?? 'no answer'}${timing}) at ${url}; retried as any delivery`, error: true },
          );
        }
      } catch {
        // Watching is a courtesy: the redelivery is queued whatever the list says.
      }
    }
    report({ text: `Queued ${event.type} for ${url}; no answer seen yet (Webhooks tab, d: deliveries)`, error: false });
  };

  if (stage.kind === 'loading') return <Text color={theme.color('yellow')}>Loading the endpoints…</Text>;
  if (stage.kind === 'sending') return <Text color={theme.color('yellow')}>Sending…</Text>;
  if (stage.kind === 'choose') {
    return (
      <Picker
        title={`Resend ${event.type} (${event.id}) to which endpoint?`}
        height={height}
        items={stage.endpoints.map((endpoint) => ({
          label: String(endpoint.url),
          hint: `${String(endpoint.format)}${endpoint.enabled ? '' : ' · disabled'}${Array.isArray(endpoint.events) && !endpoint.events.includes(event.type) ? ` · not subscribed to ${event.type}` : ''}`,
        }))}
        onPick={(index) => setStage({ kind: 'confirm', endpoint: stage.endpoints[index]! })}
        onCancel={close}
      />
    );
  }
  return (
    <Confirm
      lines={[`Resend ${event.type} (${event.id}) to ${String(stage.endpoint.url)}?`, 'Same webhook-id and body: a receiver that deduplicates ignores it.']}
      onConfirm={() => void send(stage.endpoint)}
      onCancel={close}
    />
  );
}
