import type { EndpointEvent, WebhookDelivery, WebhookEndpoint } from './schema.js';

/** What a caller without `webhooks:write` in the endpoint's organization sees instead of the signing secret. */
export const REDACTED_SECRET = 'whsec_********';

/**
 * Polar's WebhookEndpoint, plus `disabled_at` and `disabled_reason` so members see why deliveries stopped.
 * The secret is shown only to those who may change the endpoint.
 */
export function serializeEndpoint(endpoint: WebhookEndpoint, options: { showSecret: boolean }) {
  return {
    id: endpoint.id,
    created_at: endpoint.createdAt.toISOString(),
    modified_at: endpoint.modifiedAt?.toISOString() ?? null,
    url: endpoint.url,
    name: endpoint.name,
    api_version: endpoint.apiVersion,
    format: endpoint.format,
    secret: options.showSecret ? endpoint.secret : REDACTED_SECRET,
    organization_id: endpoint.organizationId,
    events: endpoint.events,
    enabled: endpoint.enabled,
    // Signed as Polar originally signs: HMAC keyed by the UTF-8 bytes of the whole secret (docs/webhooks.md).
    uses_standard_webhook_signature: false,
    disabled_at: endpoint.disabledAt?.toISOString() ?? null,
    disabled_reason: endpoint.disabledReason,
  };
}

/** Polar's WebhookEvent: one event as one endpoint receives it; `id` is the event's (the `webhook-id` header). */
export function serializeEndpointEvent(event: EndpointEvent) {
  return {
    id: event.id,
    created_at: event.createdAt.toISOString(),
    modified_at: event.modifiedAt?.toISOString() ?? null,
    last_http_code: event.lastHttpCode,
    succeeded: event.status === 'succeeded' ? true : event.status === 'failed' || event.attempts > 0 ? false : null,
    skipped: event.status === 'skipped',
    api_version: event.apiVersion,
    payload: event.payload,
    type: event.type,
    is_archived: false,
    status: event.status,
    attempts: event.attempts,
    next_attempt_at: event.status === 'pending' ? event.nextAttemptAt.toISOString() : null,
  };
}

/** Polar's WebhookDelivery, plus the endpoint, the attempt number and its duration. */
export function serializeDelivery(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    created_at: delivery.createdAt.toISOString(),
    modified_at: null,
    succeeded: delivery.succeeded,
    http_code: delivery.httpCode,
    response: delivery.response,
    webhook_event: serializeEndpointEvent(delivery.event),
    webhook_endpoint_id: delivery.endpointId,
    attempt: delivery.attempt,
    duration_ms: delivery.durationMs,
  };
}
