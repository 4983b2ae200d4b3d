import { describe, expect, it } from 'vitest';
import { authFormErrors } from './auth-errors.js';

describe('authFormErrors', () => {
  it("puts each of Better Auth's validation messages beside its field, without the [body.field] path", () => {
    const errors = authFormErrors({
      status: 400,
      code: 'VALIDATION_ERROR',
      message: '[body.email] Invalid email address; [body.name] Too big: expected string to have <=200 characters',
    });
    expect(errors).toEqual({ fields: { email: 'Invalid email address.', name: 'Too big: expected string to have <=200 characters.' } });
  });

  it('says a message about a field the form does not have above the form, path dropped', () => {
    const errors = authFormErrors({ status: 400, code: 'VALIDATION_ERROR', message: '[body.rememberMe] Invalid input: expected boolean' });
    expect(errors).toEqual({ form: 'Invalid input: expected boolean.' });
    expect(JSON.stringify(errors)).not.toContain('[body');
  });

  it('keeps a coded refusal on its field', () => {
    expect(authFormErrors({ status: 422, code: 'USER_ALREADY_EXISTS', message: 'User already exists' })).toEqual({ fields: { email: 'User already exists' } });
  });
});
