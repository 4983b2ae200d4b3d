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

/** One issue of Better Auth's VALIDATION_ERROR message: `[body.email] Invalid email address`. */
const VALIDATION_ISSUE = /^\[body\.([A-Za-z]+)\] (.+)$/;

/**
 * Better Auth's input validation names each field as `[body.field] message; …`: each message goes beside its
 * field (the path never reaches the page); one about a field the form does not have goes above it, path dropped.
 */
function validationErrors(message: string): FormErrors {
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  for (const part of message.split('; ')) {
    const match = VALIDATION_ISSUE.exec(part.trim());
    const text = sentence(match ? match[2]! : part.replace(/^\[[^\]]*\]\s*/, ''));
    if (match && FORM_FIELDS.has(match[1]!)) fields[match[1]!] ??= text;
    else rest.push(text);
  }
  return { ...(rest.length ? { form: rest.join(' ') } : {}), ...(Object.keys(fields).length ? { fields } : {}) };
}

/** The inputs the sign-in and sign-up forms have. */
const FORM_FIELDS = new Set(['name', 'email', 'username', 'password']);

const sentence = (text: string) => {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};

/** Better Auth's message for a refused sign-in or sign-up, on its field or (wrong credentials, too many tries) on the form. */
export function authFormErrors(failure: AuthFailure): FormErrors {
  if (failure.code === 'VALIDATION_ERROR') return validationErrors(failure.message);
  const field = FIELD_BY_CODE[failure.code];
  // The captcha has no visible input, so its message is also said at the top of the form.
  if (field === 'captcha') return { form: failure.message, fields: { captcha: failure.message } };
  return field ? { fields: { [field]: failure.message } } : { form: failure.message };
}
