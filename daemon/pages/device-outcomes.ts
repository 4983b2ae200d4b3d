import type { AuthFailure } from './auth-calls.js';

/** How a device-code request ended, as this page tells it. */
export type DeviceOutcome = 'approved' | 'denied' | 'invalid' | 'expired' | 'processed' | 'not_yours' | 'rate_limited';

export interface DeviceOutcomeText {
  status: number;
  title: string;
  message: string;
  tone: 'success' | 'info' | 'error';
  /** Offer the code form again: typing the code once more may help. */
  retry: boolean;
}

export const DEVICE_OUTCOMES: Record<DeviceOutcome, DeviceOutcomeText> = {
  approved: {
    status: 200,
    title: 'Device approved',
    message: 'Return to your terminal: it will finish signing in by itself. You can close this page.',
    tone: 'success',
    retry: false,
  },
  denied: {
    status: 200,
    title: 'Request denied',
    message: 'The device was not signed in. Return to your terminal; it will report the refusal.',
    tone: 'info',
    retry: false,
  },
  invalid: {
    status: 400,
    title: 'Code not recognised',
    message: 'No sign-in request has this code. Check it against the one in your terminal and try again.',
    tone: 'error',
    retry: true,
  },
  expired: {
    status: 410,
    title: 'Code expired',
    message: 'This code has expired. Start the sign-in again from your terminal to get a new one.',
    tone: 'error',
    retry: true,
  },
  processed: {
    status: 409,
    title: 'Code already used',
    message: 'This request has already been approved or denied. Start the sign-in again from your terminal if you need to.',
    tone: 'error',
    retry: false,
  },
  not_yours: {
    status: 403,
    title: 'Not your request',
    message: 'This code is being confirmed by another account, so it cannot be approved or denied from here.',
    tone: 'error',
    retry: false,
  },
  rate_limited: {
    status: 429,
    title: 'Too many attempts',
    message: 'Too many codes were tried from here. Wait a minute, then try again.',
    tone: 'error',
    retry: false,
  },
};

// Better Auth's device-authorization messages (its error-code table is not exported).
const ALREADY_PROCESSED = 'Device code already processed';
const NOT_CLAIMED = 'Device code has not been claimed';

/** A refused verify/approve/deny call as an outcome; `unclaimed` means the code was never shown to this user. */
export function deviceOutcomeOf(failure: AuthFailure): DeviceOutcome | 'unclaimed' | 'signed_out' {
  if (failure.status === 429) return 'rate_limited';
  if (failure.status === 401) return 'signed_out';
  if (failure.code === 'expired_token') return 'expired';
  if (failure.status === 403 || failure.code === 'access_denied') return 'not_yours';
  if (failure.message === ALREADY_PROCESSED) return 'processed';
  if (failure.message.startsWith(NOT_CLAIMED)) return 'unclaimed';
  return 'invalid';
}
