import Stripe from 'stripe';
import type { StripeEvent } from './state.js';

export type SignatureMode = 'valid' | 'missing' | 'wrong_secret';

export interface DeliveryOptions {
  /** The signing time, seconds since the epoch (a stale one makes the receiver refuse it). */
  timestamp?: number;
  signature?: SignatureMode;
}

export interface Delivery {
  eventId: string;
  type: string;
  status: number | null;
  attempt: number;
}

/**
 * Sends events to one webhook endpoint in the order they happened, signed as Stripe signs them
 * (`Stripe-Signature: t=…,v1=…`, made here with the package's generateTestHeaderString). A failed delivery is
 * retried a few times with a short backoff (Stripe retries for days).
 */
export function createWebhookSender(options: { secret: string; now: () => Date; maxAttempts?: number; retryDelayMs?: number }) {
  const maxAttempts = options.maxAttempts ?? 5;
  const retryDelayMs = options.retryDelayMs ?? 100;
  let url: string | undefined;
  let held = false;
  const queue: StripeEvent[] = [];
  const deliveries: Delivery[] = [];
  let running: Promise<void> = Promise.resolve();

  async function post(event: StripeEvent, deliveryOptions: DeliveryOptions = {}): Promise<{ status: number; body: string }> {
    if (!url) throw new Error('the Stripe fake has no webhook URL');
    const payload = JSON.stringify(event, null, 2);
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' };
    const mode = deliveryOptions.signature ?? 'valid';
    if (mode !== 'missing') {
      headers['stripe-signature'] = Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: mode === 'valid' ? options.secret : `${options.secret}_not`,
        timestamp: deliveryOptions.timestamp ?? Math.floor(options.now().getTime() / 1000),
      });
    }
    const response = await fetch(url, { method: 'POST', headers, body: payload, signal: AbortSignal.timeout(30_000) });
    return { status: response.status, body: await response.text() };
  }

  async function deliver(event: StripeEvent): Promise<void> {
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      let status: number | null = null;
      try {
        status = (await post(event)).status;
      } catch {
        status = null;
      }
      deliveries.push({ eventId: event.id, type: event.type, status, attempt });
      if (status !== null && status >= 200 && status < 300) return;
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs * 2 ** (attempt - 1)));
    }
  }

  function drain(): Promise<void> {
    running = running.then(async () => {
      while (!held && url && queue.length > 0) await deliver(queue.shift()!);
    });
    return running;
  }

  return {
    deliveries: deliveries as readonly Delivery[],
    setUrl(next: string | undefined) {
      url = next;
      void drain();
    },
    enqueue(event: StripeEvent) {
      if (!url) return;
      queue.push(event);
      void drain();
    },
    hold() {
      held = true;
    },
    /** Sends what was held, in the order given (reversed: newest first, as a slow network can). */
    async release(order: 'as_created' | 'reversed' = 'as_created') {
      held = false;
      if (order === 'reversed') queue.reverse();
      await drain();
    },
    /** Waits until every queued event has been delivered (or given up on). */
    idle: () => drain(),
    post,
  };
}
