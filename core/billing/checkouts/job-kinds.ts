/** The job that expires an open checkout at its expires_at (on the organization's clock). */
export const CHECKOUT_EXPIRY_JOB = 'checkout.expire';
