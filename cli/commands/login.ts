import { setTimeout as sleep } from 'node:timers/promises';
import { createApiClient } from '../api/client.js';
import { resolveServer } from '../auth/credentials.js';
import { pollDeviceToken, requestDeviceCode } from '../auth/device-api.js';
import { waitForApproval } from '../auth/device-login.js';
import { openProfileStore } from '../auth/profiles.js';
import { describeUser, serializeUser, storeSignedInSession } from '../auth/session.js';
import type { Command } from '../context.js';
import { openBrowser } from '../browser.js';

export interface LoginOptions {
  server?: string;
  /** false with --no-browser. */
  browser: boolean;
  json?: boolean;
}

/** `till login`: device-code sign-in, then the session is stored for that server. */
export const login: Command<LoginOptions> = async (options, { env, out }) => {
  const { server, store: maybeStore } = await resolveServer(env, options.server);
  const api = createApiClient({ server });
  const code = await requestDeviceCode(api);

  // A script (or --json) gets the code first, as one line, so it can hand the URL on while we poll.
  if (out.json || !out.interactive) {
    out.jsonLine({ verification_uri_complete: code.verificationUriComplete, user_code: code.userCode, expires_in: code.expiresIn });
  }
  const s = out.style.err;
  out.note(`Your one-time code: ${s.bold(formatUserCode(code.userCode))}`);
  out.note(`Approve it at ${s.cyan(code.verificationUriComplete)}`);
  if (options.browser && out.interactive) {
    const opened = await openBrowser(code.verificationUriComplete);
    out.note(opened ? s.dim('Opened your browser.') : s.yellow('Could not open a browser; open the URL above yourself.'));
  }
  const lifetime = code.expiresIn >= 120 ? `${Math.round(code.expiresIn / 60)} min` : `${code.expiresIn} s`;
  out.note(s.dim(`Waiting for approval (the code expires in ${lifetime}; Ctrl-C to cancel)…`));

  const token = await waitForApproval(
    { poll: () => pollDeviceToken(api, code.deviceCode), sleep: (ms) => sleep(ms), now: Date.now },
    { intervalSeconds: code.interval, expiresInSeconds: code.expiresIn },
  );
  const session = await storeSignedInSession(api, maybeStore ?? (await openProfileStore(env)), token);

  if (env.TILL_TOKEN) out.note(s.yellow('TILL_TOKEN is set, so other commands keep using that token instead of this session.'));
  out.result({ server, user: serializeUser(session.user) }, (style) => `${style.green('✓')} Signed in to ${server} as ${style.bold(describeUser(session.user))}`);
};

/** ABCDEFGH → ABCD-EFGH, easier to read and type; the server ignores the dash. */
export function formatUserCode(code: string): string {
  return code.length >= 8 && code.length % 2 === 0 ? `${code.slice(0, code.length / 2)}-${code.slice(code.length / 2)}` : code;
}
