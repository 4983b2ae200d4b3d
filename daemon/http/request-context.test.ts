import { describe, expect, it } from 'vitest';
import { loggablePath } from '../logger.js';

describe('the request log', () => {
  it('masks path segments that are credentials and drops every query string', () => {
    expect(loggablePath('/checkout/cs_secret123/confirmation?x=1')).toBe('/checkout/***/confirmation');
    expect(loggablePath('/v1/checkouts/client/cs_secret123/confirm')).toBe('/v1/checkouts/client/***/confirm');
    expect(loggablePath('/downloads/eyJhbGciOi.signature')).toBe('/downloads/***');
    expect(loggablePath('/v1/orders/abc/invoice.pdf?expires=1&signature=s')).toBe('/v1/orders/abc/invoice.pdf');
    expect(loggablePath('/v1/checkouts/abc')).toBe('/v1/checkouts/abc');
    expect(loggablePath('/api/auth/reset-password/tok3n?callbackURL=/x')).toBe('/api/auth/reset-password/***');
  });
});
