import type { HttpMethod } from '../../api/client.js';

/** One event of the live stream, as the Events tab keeps it. */
export interface StreamEvent {
  id: string;
  type: string;
  timestamp: string;
  /** The event's payload as sent (`{type, timestamp, data}`), for the inspector. */
  payload: unknown;
  /** Part of the history the stream opened with (it happened before the UI opened), not a new arrival. */
  history?: boolean;
}

export type ConnectionState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  | { kind: 'reconnecting'; reason: string }
  | { kind: 'failed'; message: string };

export interface StreamHandlers {
  onEvent(event: StreamEvent): void;
  onGap?(message: string): void;
  onState(state: ConnectionState): void;
}

export interface Organization {
  id: string;
  name: string;
  slug: string;
}

/**
 * Everything the terminal UI asks of the server: the same API caller the commands use, and the live stream
 * client of `till listen`. Tests pass a stand-in; `till ui` passes the real one (cli/commands/ui.ts).
 */
export interface TuiBackend {
  readonly server: string;
  /** Resolves with the JSON answer; rejects with an Error whose message is what the server said. */
  request<T = unknown>(method: HttpMethod, path: string, body?: unknown): Promise<T>;
  /** Follows the organization's live stream until `signal` aborts (reconnecting, resuming with Last-Event-ID). */
  follow(organizationId: string, handlers: StreamHandlers, signal: AbortSignal): Promise<void>;
  /** Opens a link in the user's browser; false when it could not (the UI shows the link anyway). */
  openUrl?(url: string): Promise<boolean>;
}

/** An Error's message, else its text. */
export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
