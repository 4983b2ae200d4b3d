import { CommanderError } from 'commander';
import { EXIT, isCliError } from './errors.js';
import { createOutput, type Env, type Output, type Streams } from './output.js';
import { createProgram } from './program.js';

/**
 * Runs `till` with the arguments after the program name and returns the exit code.
 * bin/till is the only caller that passes process.argv/env and calls process.exit.
 */
export async function main(
  argv: string[],
  env: Env,
  streams: Streams = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
): Promise<number> {
  let exitCode: number = EXIT.ok;
  try {
    await createProgram({ env, streams, setExitCode: (code) => (exitCode = code) }).parseAsync(argv, { from: 'user' });
  } catch (error) {
    exitCode = reportFailure(error, createOutput(streams, env, { json: argv.some((arg) => arg === '--json' || arg.startsWith('--json=')) }), env);
  }
  // Let piped output drain before bin/till exits.
  await new Promise<void>((resolve) => streams.stdout.write('', () => resolve()));
  return exitCode;
}

/** The one place failures are shown: usage errors, expected failures (CliError) and bugs. */
export function reportFailure(error: unknown, out: Output, env: Env): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
    // Help was printed already: on request (`till help x`, exit 0), or for `till` alone (stderr, a usage error).
    if (error.code === 'commander.help') return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    out.failure({ code: 'USAGE', message: error.message.replace(/^error: /, ''), hint: 'Run `till --help` (or `till <command> --help`) for usage.' });
    return EXIT.usage;
  }
  if (isCliError(error)) {
    out.failure(error);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  out.failure({
    code: 'INTERNAL_ERROR',
    message: `Unexpected error: ${message}`,
    hint: env.TILL_DEBUG ? (error instanceof Error ? error.stack : undefined) : 'This is a bug in till; run with TILL_DEBUG=1 for the stack trace and report it.',
  });
  return EXIT.error;
}
