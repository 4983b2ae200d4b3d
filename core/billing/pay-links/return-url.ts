import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Where the bank's page (the sandbox's, Stripe's) brings back the customer of a pay-link payment that needed 3-D
 * Secure: the payment, and a key made for it that only the browser paying from the link is given (through the
 * processor's redirect). A payment id alone (the seller's API lists them) opens nothing. The link's token itself is
 * never put in this URL: the processor keeps return URLs, and so does the payment row.
 */
export const payReturnPath = (paymentId: string, key: string): string => `/pay/return/${encodeURIComponent(paymentId)}?key=${encodeURIComponent(key)}`;

export const payReturnUrl = (baseUrl: string, paymentId: string, key: string): string => `${baseUrl}${payReturnPath(paymentId, key)}`;

/** A fresh return key for one pay-link payment (192 bits). */
export const newPayReturnKey = (): string => randomBytes(24).toString('base64url');

/** The key a stored return URL carries; undefined for one made before return keys (it opens nothing). */
function keyOf(returnUrl: string | null): string | undefined {
  if (!returnUrl) return undefined;
  try {
    return new URL(returnUrl).searchParams.get('key') ?? undefined;
  } catch {
    return undefined;
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** True when `given` is the key of the payment's return URL (compared in constant time). */
export function isPayReturnKey(returnUrl: string | null, given: unknown): boolean {
  const key = keyOf(returnUrl);
  if (!key || typeof given !== 'string' || given === '') return false;
  return timingSafeEqual(digest(key), digest(given));
}
