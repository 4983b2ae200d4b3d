import { setTimeout as sleep } from 'node:timers/promises';
import { createApiClient } from '../../api/client.js';
import { pollDeviceToken, requestDeviceCode } from '../../auth/device-api.js';
import { waitForApproval, type TokenPoll } from '../../auth/device-login.js';
import type { ProfileStore } from '../../auth/profiles.js';
import { describeUser, storeSignedInSession } from '../../auth/session.js';
import { openBrowser } from '../../browser.js';

/** A device code as the sign-in screen shows it. */
export interface DevicePrompt {
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  /** Seconds the code lives. */
  expiresIn: number;
  /** Seconds between polls, as the server asked at first. */
  interval: number;
}

/** The in-app sign-in: `till login`'s device-code flow, driven by the terminal UI. */
export interface LoginFlow {
  readonly server: string;
  /** Asks the server for a new code. */
  start(): Promise<DevicePrompt>;
  /**
   * Polls until the code is approved (waiting the server's interval, five seconds more after each slow_down) and
   * stores the session as `till login` does; resolves with who signed in. Rejects when denied, expired or aborted.
   * `onPoll` hears each answer the server gave (pending, slow_down…).
   */
  wait(prompt: DevicePrompt, onPoll: (answer: TokenPoll['kind']) => void, signal: AbortSignal): Promise<{ user: string; token: string }>;
  openBrowser(url: string): Promise<boolean>;
}

/** The real flow: cli/auth's device-code requests and poll loop, and the profile store `till login` writes. */
export function createLoginFlow(server: string, openStore: () => Promise<ProfileStore>): LoginFlow {
  const api = createApiClient({ server });
  const codes = new Map<string, string>();
  return {
    server,
    async start() {
      const code = await requestDeviceCode(api);
      codes.set(code.userCode, code.deviceCode);
      return { userCode: code.userCode, verificationUri: code.verificationUri, verificationUriComplete: code.verificationUriComplete, expiresIn: code.expiresIn, interval: code.interval };
    },
    async wait(prompt, onPoll, signal) {
      const deviceCode = codes.get(prompt.userCode);
      if (!deviceCode) throw new Error('Unknown code: ask for a new one.');
      const token = await waitForApproval(
        {
          poll: async () => {
            const answer = await pollDeviceToken(api, deviceCode);
            if (!signal.aborted) onPoll(answer.kind);
            return answer;
          },
          // Leaving the screen aborts the wait: the sleep rejects and the loop ends.
          sleep: (ms) => sleep(ms, undefined, { signal }),
          now: Date.now,
        },
        { intervalSeconds: prompt.interval, expiresInSeconds: prompt.expiresIn },
      );
      codes.delete(prompt.userCode);
      const session = await storeSignedInSession(api, await openStore(), token);
      return { user: describeUser(session.user), token };
    },
    openBrowser,
  };
}
