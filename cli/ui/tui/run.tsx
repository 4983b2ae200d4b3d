import { render } from 'ink';
import { App } from './App.js';
import type { Organization, TuiBackend } from './backend.js';

export interface RunOptions {
  backend: TuiBackend;
  organizations: Organization[];
  organizationId: string;
  color: boolean;
  stdout: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
}

/** Draws the app on the terminal's alternate screen until the user quits; restores the screen after. */
export async function runTui({ stdout, stdin, ...props }: RunOptions): Promise<void> {
  stdout.write('\x1b[?1049h\x1b[H');
  try {
    const instance = render(<App {...props} />, { stdout, stdin, exitOnCtrlC: false, patchConsole: true, maxFps: 30 });
    await instance.waitUntilExit();
  } finally {
    stdout.write('\x1b[?1049l');
  }
}
