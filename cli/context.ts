import type { Env, Output } from './output.js';

/** What every command gets besides its parsed flags. */
export interface CommandContext {
  env: Env;
  out: Output;
}

/** A command: parses nothing itself (commander did), calls the API, renders. Returns its exit code (0 if void). */
export type Command<Options> = (options: Options, context: CommandContext) => Promise<number | void>;
