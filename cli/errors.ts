/** Exit codes of `till`; docs/cli.md lists them, and scripts rely on them. */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  notSignedIn: 3,
  notFound: 4,
  invalid: 5,
  rateLimited: 6,
  serverError: 7,
  unreachable: 8,
  /** `till plan`: the organization differs from the file (apply would change something). */
  changesPending: 10,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * A failure the user must act on (sign in, start the server, fix a flag): shown as a plain message
 * with an optional hint, never with a stack. Anything thrown that is not a CliError is a bug.
 */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    /** Stable UPPER_SNAKE code, part of the JSON error shape. */
    readonly code: string,
    message: string,
    readonly exitCode: ExitCode,
    /** What to do about it, for a person. */
    readonly hint?: string,
  ) {
    super(message);
  }
}

export const isCliError = (error: unknown): error is CliError => error instanceof CliError;

export const notSignedIn = (server: string) =>
  new CliError('NOT_SIGNED_IN', `Not signed in to ${server}.`, EXIT.notSignedIn, 'Run `till login` to sign in.');

export const sessionInvalid = (server: string) =>
  new CliError(
    'SESSION_INVALID',
    `Your session on ${server} is no longer valid (signed out or expired).`,
    EXIT.notSignedIn,
    'Run `till login` to sign in again.',
  );
