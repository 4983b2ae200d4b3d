import { Box, Text, useApp } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { formatUserCode } from '../../commands/login.js';
import type { AppSetup } from './App.js';
import { messageOf } from './backend.js';
import { useKeys } from './keys.js';
import type { DevicePrompt, LoginFlow } from './login-flow.js';
import { useTheme } from './theme.js';

export interface SignInProps {
  flow: LoginFlow;
  /** Why signing in is needed (e.g. the stored session ended); "not signed in" when absent. */
  reason?: string;
  /** Opens the app with the new session's token (organizations, the chosen one); its refusal ends `till ui`. */
  connect(token: string): Promise<AppSetup>;
  onReady(setup: AppSetup): void;
}

type State =
  | { kind: 'requesting' }
  | { kind: 'waiting'; prompt: DevicePrompt; expiresAt: number; polls: number; intervalSeconds: number; slowedDown: boolean }
  | { kind: 'failed'; message: string }
  | { kind: 'connecting'; user: string }
  | { kind: 'fatal'; error: unknown };

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const remaining = (ms: number) => {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

/**
 * The device-code sign-in inside the app (as `till login`): the code and URL, a spinner while the server is polled,
 * Enter opens the browser; a denied or expired code offers a new one. Signed in, it opens the app.
 */
export function SignIn({ flow, reason, connect, onReady }: SignInProps) {
  const { exit } = useApp();
  const theme = useTheme();
  const [attempt, setAttempt] = useState(0);
  const [state, setState] = useState<State>({ kind: 'requesting' });
  const [browser, setBrowser] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  const opening = useRef(false);

  useEffect(() => {
    const controller = new AbortController();
    const alive = () => !controller.signal.aborted;
    setState({ kind: 'requesting' });
    setBrowser(undefined);
    void (async () => {
      let prompt: DevicePrompt;
      try {
        prompt = await flow.start();
      } catch (error) {
        if (alive()) setState({ kind: 'failed', message: messageOf(error) });
        return;
      }
      if (!alive()) return;
      setState({ kind: 'waiting', prompt, expiresAt: Date.now() + prompt.expiresIn * 1000, polls: 0, intervalSeconds: prompt.interval, slowedDown: false });
      let signedIn: { user: string; token: string };
      try {
        signedIn = await flow.wait(
          prompt,
          (answer) =>
            setState((s) =>
              s.kind !== 'waiting' ? s : { ...s, polls: s.polls + 1, ...(answer === 'slow_down' ? { intervalSeconds: s.intervalSeconds + 5, slowedDown: true } : {}) },
            ),
          controller.signal,
        );
      } catch (error) {
        if (alive()) setState({ kind: 'failed', message: messageOf(error) });
        return;
      }
      if (!alive()) return;
      setState({ kind: 'connecting', user: signedIn.user });
      try {
        const setup = await connect(signedIn.token);
        if (alive()) onReady(setup);
      } catch (error) {
        if (alive()) setState({ kind: 'fatal', error });
      }
    })();
    return () => controller.abort();
  }, [flow, attempt]);

  const waiting = state.kind === 'waiting' || state.kind === 'requesting' || state.kind === 'connecting';
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(() => setTick((t) => t + 1), 100);
    return () => clearInterval(timer);
  }, [waiting]);

  useKeys((input, key) => {
    if (state.kind === 'fatal') return exit(state.error instanceof Error ? state.error : new Error(messageOf(state.error)));
    if (input === 'q' || key.escape || (key.ctrl && input === 'c')) return exit();
    if (!key.return) return;
    if (state.kind === 'failed') return setAttempt((a) => a + 1);
    if (state.kind === 'waiting' && !opening.current) {
      opening.current = true;
      setBrowser('Opening your browser…');
      void flow
        .openBrowser(state.prompt.verificationUriComplete)
        .then((opened) => setBrowser(opened ? 'Opened your browser: approve the code there.' : 'Could not open a browser: open the URL above yourself.'))
        .finally(() => (opening.current = false));
    }
  });

  const spinner = <Text color={theme.color('cyan')}>{SPINNER[tick % SPINNER.length]}</Text>;
  return (
    <Box flexDirection="column" paddingX={1}>
      <Box justifyContent="space-between">
        <Text wrap="truncate-end">
          <Text bold color={theme.color('cyan')}>till</Text> {flow.server}
        </Text>
        <Text color={theme.color('yellow')}>not signed in</Text>
      </Box>
      <Text> </Text>
      <Text bold>Sign in to {flow.server}</Text>
      {reason ? <Text color={theme.color('yellow')}>{reason}</Text> : null}
      <Text> </Text>
      {state.kind === 'requesting' ? (
        <Text>
          {spinner} Asking for a one-time code…
        </Text>
      ) : null}
      {state.kind === 'waiting' ? (
        <Box flexDirection="column">
          <Text>
            Your one-time code: <Text bold color={theme.color('green')}>{formatUserCode(state.prompt.userCode)}</Text>
          </Text>
          <Text>Approve it at:</Text>
          <Text color={theme.color('cyan')} wrap="wrap">
            {state.prompt.verificationUriComplete}
          </Text>
          <Text> </Text>
          <Text>
            {spinner} Waiting for approval… <Text dimColor>(expires in {remaining(state.expiresAt - Date.now())})</Text>
          </Text>
          <Text dimColor>
            {state.polls === 0 ? `checking every ${state.intervalSeconds} s` : `checked ${state.polls} time${state.polls === 1 ? '' : 's'}, every ${state.intervalSeconds} s`}
            {state.slowedDown ? ' (the server asked to slow down)' : ''}
          </Text>
          {browser ? <Text>{browser}</Text> : null}
        </Box>
      ) : null}
      {state.kind === 'failed' ? <Text color={theme.color('red')}>✗ {state.message}</Text> : null}
      {state.kind === 'connecting' ? (
        <Text>
          <Text color={theme.color('green')}>✓ Signed in as {state.user}.</Text> {spinner} Opening…
        </Text>
      ) : null}
      {state.kind === 'fatal' ? <Text color={theme.color('red')}>✗ {messageOf(state.error)}</Text> : null}
      <Text> </Text>
      <Text dimColor>
        {state.kind === 'waiting'
          ? 'Enter open the browser · q quit'
          : state.kind === 'failed'
            ? 'Enter ask for a new code · q quit'
            : state.kind === 'fatal'
              ? 'Any key quits'
              : 'q quit'}
      </Text>
    </Box>
  );
}
