import type { Writable } from 'node:stream';

export type Env = Readonly<Record<string, string | undefined>>;

/** The three standard streams; main() gets them from bin/till, tests could pass others. */
export interface Streams {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  stdin: { isTTY?: boolean };
}

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/** Colour only for a terminal, and never when NO_COLOR is set to anything but '' (no-color.org) or TERM=dumb. */
export function colorEnabled(stream: { isTTY?: boolean }, env: Env): boolean {
  if (env.NO_COLOR) return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

const sgr = (on: boolean, open: number, close: number) => (on ? (text: string) => `\x1b[${open}m${text}\x1b[${close}m` : (text: string) => text);

export function createStyle(on: boolean): Style {
  return {
    bold: sgr(on, 1, 22),
    dim: sgr(on, 2, 22),
    red: sgr(on, 31, 39),
    green: sgr(on, 32, 39),
    yellow: sgr(on, 33, 39),
    cyan: sgr(on, 36, 39),
  };
}

/** A failure as both renderings show it. */
export interface FailureView {
  code: string;
  message: string;
  hint?: string;
}

export interface Output {
  readonly json: boolean;
  /** A person is at the keyboard: stdin and stdout are both terminals. */
  readonly interactive: boolean;
  /** Styles for text written to stdout and to stderr (each is plain unless its stream may have colour). */
  readonly style: { out: Style; err: Style };
  /** The command's result: one JSON document on stdout with --json, the human text otherwise. */
  result(data: unknown, human: (style: Style) => string): void;
  /** One JSON line on stdout whatever the mode (machine-readable progress, e.g. the device code). */
  jsonLine(data: unknown): void;
  /** Progress and instructions for a person, on stderr; silent with --json so stderr carries only errors. */
  note(text: string): void;
  /** A failure: `{"error":{code,message}}` on stderr with --json, the message and hint otherwise. */
  failure(failure: FailureView): void;
}

/** How a command talks to the terminal. With --json, stdout holds only JSON and errors are JSON on stderr. */
export function createOutput(streams: Streams, env: Env, options: { json?: boolean }): Output {
  const json = options.json === true;
  const out = createStyle(colorEnabled(streams.stdout, env));
  const err = createStyle(colorEnabled(streams.stderr, env));
  const line = (stream: Writable, text: string) => {
    stream.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  return {
    json,
    interactive: streams.stdout.isTTY === true && streams.stdin.isTTY === true,
    style: { out, err },
    result(data, human) {
      line(streams.stdout, json ? JSON.stringify(data) : human(out));
    },
    jsonLine(data) {
      line(streams.stdout, JSON.stringify(data));
    },
    note(text) {
      if (!json) line(streams.stderr, text);
    },
    failure({ code, message, hint }) {
      if (json) {
        line(streams.stderr, JSON.stringify({ error: { code, message } }));
        return;
      }
      line(streams.stderr, `${err.red('✗')} ${message}${hint ? `\n  ${err.dim(hint)}` : ''}`);
    },
  };
}
