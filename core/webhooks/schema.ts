import { API_VERSIONS, type ApiVersion } from '../billing/shared/api-version.js';
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './outbox.js';

export const WEBHOOK_FORMATS = ['raw', 'discord', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** Where an event stands for one endpoint. */
export const ENDPOINT_EVENT_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export type EndpointEventStatus = (typeof ENDPOINT_EVENT_STATUSES)[number];

/** An http(s) URL with a host, at most 2,083 characters (Polar's limit); surrounding spaces are dropped. */
export const EndpointUrl = z
  .string()
  .trim()
  .max(2083)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'Give an http or https URL with a host, such as https://example.com/webhooks');

const EventType = z.enum(WEBHOOK_EVENT_TYPES, { error: `Unknown event type; Till sends: ${WEBHOOK_EVENT_TYPES.join(', ')}` });
const Events = z.array(EventType).max(WEBHOOK_EVENT_TYPES.length * 2).transform((events) => [...new Set(events)]);
/** An empty name clears it. */
const Name = z.string().trim().max(256);
/** A secret chosen by the caller (Polar still accepts one): 32 to 256 printable characters. */
const Secret = z.string().min(32).max(256).regex(/^[\x21-\x7e]+$/, 'Use printable ASCII characters without spaces');

/** POST /v1/webhooks/endpoints. */
export const WebhookEndpointCreate = z.object({
  url: EndpointUrl,
  name: Name.nullish(),
  secret: Secret.nullish(),
  format: z.enum(WEBHOOK_FORMATS),
  events: Events,
  organization_id: z.string().min(1).nullish(),
  /** The Polar-Version its payloads are written in; the current version when left out. */
  api_version: z.enum(API_VERSIONS).nullish(),
});
export type WebhookEndpointCreate = z.infer<typeof WebhookEndpointCreate>;

/** PATCH /v1/webhooks/endpoints/{id}: every field optional; `null` leaves it as it is (as Polar does). */
export const WebhookEndpointUpdate = z.object({
  url: EndpointUrl.nullish(),
  name: Name.nullish(),
  secret: Secret.nullish(),
  format: z.enum(WEBHOOK_FORMATS).nullish(),
  events: Events.nullish(),
  enabled: z.boolean().nullish(),
  api_version: z.enum(API_VERSIONS).nullish(),
});
export type WebhookEndpointUpdate = z.infer<typeof WebhookEndpointUpdate>;

export interface WebhookEndpoint {
  id: string;
  organizationId: string;
  url: string;
  name: string | null;
  format: WebhookFormat;
  /** The Polar-Version its payloads are written in. */
  apiVersion: ApiVersion;
  secret: string;
  events: WebhookEventType[];
  enabled: boolean;
  /** Events that finally failed in a row; reaching the limit disables the endpoint. */
  consecutiveFailures: number;
  disabledAt: Date | null;
  /** Why the endpoint was disabled (shown to the organization's members), null while enabled. */
  disabledReason: string | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** One event as one endpoint receives it (Polar's WebhookEvent). `id` is the outbox event's id. */
export interface EndpointEvent {
  rowId: string;
  id: string;
  endpointId: string;
  organizationId: string;
  seq: number;
  type: WebhookEventType;
  /** The Polar-Version the payload was written in (the endpoint's when the event reached it). */
  apiVersion: ApiVersion;
  /** The request body, frozen when the event reached the endpoint: every attempt sends these bytes. */
  payload: string;
  status: EndpointEventStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastHttpCode: number | null;
  createdAt: Date;
  modifiedAt: Date | null;
}

/** One attempt to deliver an event to an endpoint. */
export interface WebhookDelivery {
  id: string;
  endpointId: string;
  organizationId: string;
  attempt: number;
  succeeded: boolean;
  httpCode: number | null;
  /** The first 2,048 characters of the answer, or why there was none (timeout, refused address…). */
  response: string | null;
  durationMs: number;
  createdAt: Date;
  event: EndpointEvent;
}
