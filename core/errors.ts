/** What kind of expected failure happened; the daemon maps each kind to one HTTP status. */
export type ErrorKind =
  | 'invalid'
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payment_failed'
  | 'rate_limited';

/** An expected failure the caller must act on, with a stable UPPER_SNAKE code. Anything else is a bug. */
export class CoreError extends Error {
  override name = 'CoreError';
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export const isCoreError = (error: unknown): error is CoreError => error instanceof CoreError;
