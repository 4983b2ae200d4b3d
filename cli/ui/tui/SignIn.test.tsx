import { afterEach, describe, expect, it } from 'vitest';
import { deviceCodeExpired, type TokenPoll } from '../../auth/device-login.js';
import type { AppSetup } from './App.js';
import type { DevicePrompt, LoginFlow } from './login-flow.js';
import { Root } from './Root.js';
import { fakeBackend, KEY, ORGS, renderUi, until } from './testing.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

/** A sign-in flow the test drives: each code's wait is settled by the test, polls are reported when it says. */
function fakeFlow() {
  const waits: { prompt: DevicePrompt; onPoll: (answer: TokenPoll['kind']) => void; resolve(value: { user: string; token: string }): void; reject(error: unknown): void; signal: AbortSignal }[] = [];
  const opened: string[] = [];
  let codes = 0;
  let browser: (opened: boolean) => void = () => {};
  const flow: LoginFlow = {
    server: 'http://127.0.0.1:4010',
    async start() {
      codes += 1;
      const code = `WDJB${String(codes).padStart(4, '0')}`;
      return { userCode: code, verificationUri: 'http://127.0.0.1:4010/device', verificationUriComplete: `http://127.0.0.1:4010/device?user_code=${code}`, expiresIn: 1800, interval: 5 };
    },
    wait(prompt, onPoll, signal) {
      return new Promise((resolve, reject) => waits.push({ prompt, onPoll, resolve, reject, signal }));
    },
    openBrowser(url) {
      opened.push(url);
      return new Promise((resolve) => (browser = resolve));
    },
  };
  return { flow, waits, opened, browserAnswers: (answer: boolean) => browser(answer) };
}

function open(flow: LoginFlow, connect: (token: string) => Promise<AppSetup>) {
  const app = renderUi(<Root start={{ kind: 'sign-in', flow, connect }} color={false} flushMs={5} />);
  cleanup = app.unmount;
  return app;
}

const idle = () => fakeBackend(() => ({ items: [] })).backend;

describe('the in-app sign-in', () => {
  it('shows the code, the URL and the polls, slows down by five seconds when the server asks, then opens the app with the new token', async () => {
    const fake = fakeFlow();
    const tokens: string[] = [];
    const app = open(fake.flow, async (token) => {
      tokens.push(token);
      return { backend: idle(), organizations: ORGS, organizationId: 'org_A' };
    });
    const frame = await app.showing('Waiting for approval');
    expect(frame).toContain('Your one-time code: WDJB-0001');
    expect(frame).toContain('http://127.0.0.1:4010/device?user_code=WDJB0001');
    expect(frame).toContain('expires in 30:00');
    expect(frame).toContain('checking every 5 s');
    await until(() => fake.waits.length === 1, 'the wait');
    fake.waits[0]!.onPoll('pending');
    await app.showing('checked 1 time, every 5 s');
    fake.waits[0]!.onPoll('slow_down');
    await app.showing('checked 2 times, every 10 s (the server asked to slow down)');
    fake.waits[0]!.resolve({ user: 'Ada <ada@example.com>', token: 'tok_new' });
    const opened = await app.showing('● live');
    expect(opened).toContain('Acme Store');
    expect(tokens).toEqual(['tok_new']);
  });

  it('opens the browser on Enter (once while it opens) and says whether it could', async () => {
    const fake = fakeFlow();
    const app = open(fake.flow, async () => ({ backend: idle(), organizations: ORGS, organizationId: 'org_A' }));
    await app.showing('Enter open the browser');
    await app.press(KEY.enter, KEY.enter);
    await app.showing('Opening your browser…');
    expect(fake.opened).toEqual(['http://127.0.0.1:4010/device?user_code=WDJB0001']);
    fake.browserAnswers(false);
    await app.showing('Could not open a browser: open the URL above yourself.');
    await app.press(KEY.enter);
    await until(() => fake.opened.length === 2, 'the second opening');
    fake.browserAnswers(true);
    await app.showing('Opened your browser: approve the code there.');
  });

  it('shows an expired code’s message and asks for a new code on Enter, dropping the old wait', async () => {
    const fake = fakeFlow();
    const app = open(fake.flow, async () => ({ backend: idle(), organizations: ORGS, organizationId: 'org_A' }));
    await app.showing('WDJB-0001');
    await until(() => fake.waits.length === 1, 'the wait');
    fake.waits[0]!.reject(deviceCodeExpired());
    await app.showing('✗ The code expired before anyone approved it.');
    await app.press(KEY.enter);
    await app.showing('WDJB-0002');
    await until(() => fake.waits.length === 2, 'the second wait');
    expect(fake.waits[1]!.prompt.userCode).toBe('WDJB0002');
  });

  it('stops polling when the user quits, and shows why the app cannot open once signed in', async () => {
    const fake = fakeFlow();
    const quitting = open(fake.flow, async () => ({ backend: idle(), organizations: ORGS, organizationId: 'org_A' }));
    await quitting.showing('WDJB-0001');
    await until(() => fake.waits.length === 1, 'the wait');
    await quitting.press('q');
    await until(() => fake.waits[0]!.signal.aborted, 'the wait to be aborted');
    quitting.unmount();

    const refused = fakeFlow();
    const app = open(refused.flow, async () => {
      throw new Error('You belong to no organization on http://127.0.0.1:4010.');
    });
    await until(() => refused.waits.length === 1, 'the wait');
    refused.waits[0]!.resolve({ user: 'Ada <ada@example.com>', token: 'tok' });
    const frame = await app.showing('✗ You belong to no organization');
    expect(frame).toContain('Any key quits');
  });
});
