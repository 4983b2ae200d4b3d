import { CliError, EXIT } from '../errors.js';

/** One answer of the token endpoint (RFC 8628 §3.5), reduced to what the poll loop decides on. */
export type TokenPoll =
  | { kind: 'token'; accessToken: string }
  | { kind: 'pending' }
  | { kind: 'slow_down' }
  | { kind: 'denied' }
  | { kind: 'expired' };

export interface PollDeps {
  /** Asks the server once whether the code was approved. */
  poll(): Promise<TokenPoll>;
  sleep(ms: number): Promise<void>;
  now(): number;
}

export interface PollSchedule {
  /** Seconds to wait between polls, as the server asked. */
  intervalSeconds: number;
  /** Seconds the code lives. */
  expiresInSeconds: number;
}

/** RFC 8628 §3.5: every slow_down adds five seconds to the interval, for good. */
export const SLOW_DOWN_STEP_MS = 5_000;

export const accessDenied = () =>
  new CliError('ACCESS_DENIED', 'The sign-in request was denied in the browser.', EXIT.notSignedIn, 'Run `till login` again if that was a mistake.');

export const deviceCodeExpired = () =>
  new CliError('DEVICE_CODE_EXPIRED', 'The code expired before anyone approved it.', EXIT.notSignedIn, 'Run `till login` again and approve the new code in time.');

/**
 * Polls until the code is approved and returns the session token; throws ACCESS_DENIED or
 * DEVICE_CODE_EXPIRED (both exit 3: the user is not signed in). Waits before each poll, as the
 * server counts a poll that comes sooner than the interval as slow_down.
 */
export async function waitForApproval(deps: PollDeps, schedule: PollSchedule): Promise<string> {
  let intervalMs = Math.max(1, schedule.intervalSeconds) * 1000;
  const deadline = deps.now() + schedule.expiresInSeconds * 1000;
  for (;;) {
    await deps.sleep(intervalMs);
    const answer = await deps.poll();
    switch (answer.kind) {
      case 'token':
        return answer.accessToken;
      case 'denied':
        throw accessDenied();
      case 'expired':
        throw deviceCodeExpired();
      case 'slow_down':
        intervalMs += SLOW_DOWN_STEP_MS;
        break;
      case 'pending':
        break;
    }
    // The server says expired_token itself; this stops a client whose clock or server disagrees from polling forever.
    if (deps.now() >= deadline) throw deviceCodeExpired();
  }
}
