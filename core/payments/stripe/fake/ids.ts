import { randomBytes } from 'node:crypto';

/** Stripe-looking ids: a prefix, then 24 random characters. */
export const stripeId = (prefix: string) => `${prefix}_${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x').slice(0, 24)}`;

/** Seconds since the epoch, Stripe's time format. */
export const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
