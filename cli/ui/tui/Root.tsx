import { useState } from 'react';
import { App, type AppSetup } from './App.js';
import { KeysProvider } from './keys.js';
import type { LoginFlow } from './login-flow.js';
import { SignIn } from './SignIn.js';
import { ThemeContext, themeFor } from './theme.js';

/** How `till ui` starts: signed in already, or signing in first (then `connect` opens the app with the new token). */
export type Start =
  | { kind: 'app'; setup: AppSetup }
  | { kind: 'sign-in'; flow: LoginFlow; reason?: string; connect(token: string): Promise<AppSetup> };

export interface RootProps {
  start: Start;
  color: boolean;
  flushMs?: number;
}

/** The sign-in screen when needed, then the app. */
export function Root({ start, color, flushMs }: RootProps) {
  const [setup, setSetup] = useState<AppSetup | undefined>(start.kind === 'app' ? start.setup : undefined);
  if (setup) return <App {...setup} color={color} flushMs={flushMs} />;
  if (start.kind !== 'sign-in') return null;
  return (
    <ThemeContext.Provider value={themeFor(color)}>
      <KeysProvider>
        <SignIn flow={start.flow} reason={start.reason} connect={start.connect} onReady={setSetup} />
      </KeysProvider>
    </ThemeContext.Provider>
  );
}
