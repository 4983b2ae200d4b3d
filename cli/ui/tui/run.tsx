import { render } from 'ink';
import { Root, type Start } from './Root.js';

export interface RunOptions {
  start: Start;
  color: boolean;
  stdout: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
}

/** Draws the app on the terminal's alternate screen until the user quits; restores the screen after. */
export async function runTui({ stdout, stdin, start, color }: RunOptions): Promise<void> {
  stdout.write('\x1b[?1049h\x1b[H');
  try {
    const instance = render(<Root start={start} color={color} />, { stdout, stdin, exitOnCtrlC: false, patchConsole: true, maxFps: 30 });
    await instance.waitUntilExit();
  } finally {
    stdout.write('\x1b[?1049l');
  }
}
