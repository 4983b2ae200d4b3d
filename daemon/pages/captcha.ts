import type { AppDeps } from '../app.js';
import { fieldOf } from './forms.js';

/**
 * Form fields that may carry a captcha answer: our own, and the hidden inputs the Turnstile, reCAPTCHA
 * and hCaptcha widgets add to a form, so a widget dropped into the page works without more code.
 */
const CAPTCHA_FIELDS = ['captcha_response', 'cf-turnstile-response', 'g-recaptcha-response', 'h-captcha-response'] as const;

/** The captcha provider when Better Auth's captcha plugin is on, else undefined. */
export function captchaProvider(deps: AppDeps): string | undefined {
  const plugins = (deps.auth.options.plugins ?? []) as readonly { id: string; options?: { provider?: string } }[];
  return plugins.find((plugin) => plugin.id === 'captcha')?.options?.provider;
}

/** The header Better Auth's captcha plugin reads on sign-in and sign-up, from the first answered field. */
export function captchaHeaders(body: unknown): Record<string, string> {
  for (const name of CAPTCHA_FIELDS) {
    const value = fieldOf(body, name).trim();
    if (value) return { 'x-captcha-response': value };
  }
  return {};
}
