import { CliError, EXIT } from '../errors.js';
import type { Streams } from '../output.js';

/** Asks a person for what the command line left out. */
export interface Prompter {
  text(message: string, options?: { default?: string; validate?: (value: string) => string | true }): Promise<string>;
  select(message: string, choices: readonly { value: string; name?: string }[]): Promise<string>;
  confirm(message: string): Promise<boolean>;
}

/** Someone can answer: stdin is a terminal, and so is stderr, where the questions go (stdout stays for the result). */
export const canPrompt = (streams: Streams) => streams.stdin.isTTY === true && streams.stderr.isTTY === true;

/** What off a terminal takes the place of asking: a usage error naming the flag to give. */
export const missingArgument = (names: readonly string[], what: string) =>
  new CliError(
    'MISSING_ARGUMENT',
    `Missing ${names.join(', ')} (needed to ${what}).`,
    EXIT.usage,
    'Give it on the command line (or in --data); till asks for it only on a terminal.',
  );

/**
 * The prompts, on stderr. @inquirer/prompts is imported here, when a question is actually asked, so
 * commands that have everything they need never load it (start-up time, docs/performance.md).
 */
export async function openPrompter(streams: Streams): Promise<Prompter> {
  const inquirer = await import('./inquirer.js');
  const context = { input: process.stdin, output: streams.stderr as NodeJS.WritableStream, clearPromptOnDone: false };
  const asking = async <T>(question: Promise<T>): Promise<T> => {
    try {
      return await question;
    } catch (error) {
      // Ctrl-C or Ctrl-D while a question is open.
      if (error instanceof Error && error.name === 'ExitPromptError') throw new CliError('CANCELLED', 'Cancelled.', EXIT.error);
      throw error;
    }
  };
  return {
    text: (message, options = {}) =>
      asking(inquirer.input({ message, default: options.default, required: true, validate: options.validate }, context)),
    select: (message, choices) => asking(inquirer.select({ message, choices: choices.map((choice) => ({ value: choice.value, name: choice.name ?? choice.value })) }, context)),
    confirm: (message) => asking(inquirer.confirm({ message, default: false }, context)),
  };
}
