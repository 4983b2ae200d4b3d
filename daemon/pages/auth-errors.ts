import type { AuthFailure } from './auth-calls.js';
import type { FormErrors } from './forms.js';

/** Better Auth error codes that are about one field, so the message sits next to that input. */
const FIELD_BY_CODE: Record<string, string> = {
  INVALID_EMAIL: 'email',
  USER_ALREADY_EXISTS: 'email',
  USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL: 'email',
  PASSWORD_TOO_SHORT: 'password',
  PASSWORD_TOO_LONG: 'password',
  INVALID_PASSWORD: 'password',
  MISSING_RESPONSE: 'captcha',
  VERIFICATION_FAILED: 'captcha',
};

/** Better Auth's message for a refused sign-in or sign-up, on its field or (wrong credentials, too many tries) on the form. */
export function authFormErrors(failure: AuthFailure): FormErrors {
  const field = FIELD_BY_CODE[failure.code];
  // The captcha has no visible input, so its message is also said at the top of the form.
  if (field === 'captcha') return { form: failure.message, fields: { captcha: failure.message } };
  return field ? { fields: { [field]: failure.message } } : { form: failure.message };
}
