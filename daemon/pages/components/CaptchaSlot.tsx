/**
 * Where a captcha widget goes when one is configured. No widget script can load (the CSP allows only
 * this daemon's own scripts and the daemon may run offline), so this is the hook: an operator's widget
 * fills `captcha_response` (or adds its own hidden field), which the daemon passes to Better Auth.
 */
export function CaptchaSlot({ provider, error }: { provider?: string; error?: string }) {
  if (!provider) return null;
  return (
    <div className="field captcha" data-captcha-provider={provider}>
      {error ? (
        <p id="field-captcha-error" className="field-error">
          {error}
        </p>
      ) : null}
      <input type="hidden" name="captcha_response" value="" />
    </div>
  );
}
