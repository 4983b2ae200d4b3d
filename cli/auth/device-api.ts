import { httpFailure, type ApiClient } from '../api/client.js';
import { CliError, EXIT } from '../errors.js';
import type { TokenPoll } from './device-login.js';

/** The client id tilld's device flow accepts for this CLI (core/auth/device-clients.ts). */
export const DEVICE_CLIENT_ID = 'till-cli';
const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

export interface DeviceCode {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresIn: number;
  interval: number;
}

/** Starts a device-code login (RFC 8628 §3.1–3.2). */
export async function requestDeviceCode(api: ApiClient): Promise<DeviceCode> {
  const body = await api.post<Record<string, unknown>>('/api/auth/device/code', { client_id: DEVICE_CLIENT_ID });
  const text = (key: string) => (typeof body?.[key] === 'string' ? (body[key] as string) : undefined);
  const deviceCode = text('device_code');
  const userCode = text('user_code');
  const verificationUri = text('verification_uri');
  if (!deviceCode || !userCode || !verificationUri) {
    throw new CliError('BAD_RESPONSE', `${api.server} did not return a device code.`, EXIT.serverError);
  }
  return {
    deviceCode,
    userCode,
    verificationUri,
    verificationUriComplete: text('verification_uri_complete') ?? verificationUri,
    expiresIn: typeof body.expires_in === 'number' ? body.expires_in : 1800,
    interval: typeof body.interval === 'number' ? body.interval : 5,
  };
}

const POLL_ANSWERS: Record<string, TokenPoll['kind']> = {
  authorization_pending: 'pending',
  slow_down: 'slow_down',
  access_denied: 'denied',
  expired_token: 'expired',
};

/** Asks once for the token (RFC 8628 §3.4); the four RFC answers resolve, anything else throws. */
export async function pollDeviceToken(api: ApiClient, deviceCode: string): Promise<TokenPoll> {
  const response = await api.send('POST', '/api/auth/device/token', {
    body: { grant_type: DEVICE_GRANT_TYPE, device_code: deviceCode, client_id: DEVICE_CLIENT_ID },
  });
  const body = (response.body ?? {}) as Record<string, unknown>;
  if (response.status === 200 && typeof body.access_token === 'string') return { kind: 'token', accessToken: body.access_token };
  // A 429 (the server's rate limit, shared by everyone behind one address) means the same as slow_down.
  if (response.status === 429) return { kind: 'slow_down' };
  const kind = response.status === 400 && typeof body.error === 'string' ? POLL_ANSWERS[body.error] : undefined;
  if (kind && kind !== 'token') return { kind } as TokenPoll;
  throw httpFailure(api.server, response);
}
