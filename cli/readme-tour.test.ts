import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../daemon/testing/daemon.js';
import { startReceiver, type Receiver } from './testing/receiver.js';
import { TILL_BIN, decide, firstLine, signUp, tempConfigDir, till, tillEnv, type TestUser } from './testing/till.js';

/*
 * Issue 14: the README's quick start and tour, run in order against a real daemon, read from the README itself, so
 * this fails when the README and the commands drift apart. Only what a test cannot do as written is translated:
 * the browser steps (`open …/sign-up`, approving `till login`'s code) go through the same HTTP calls the pages make,
 * the server is the test daemon (TILL_SERVER) and the app `till listen` forwards to is a local receiver.
 */

const README = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

/** The shell lines of the fenced blocks of a section (comments and blank lines dropped). */
function commandsOf(heading: string): string[] {
  const start = README.indexOf(`\n## ${heading}`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((block) => block[1]!.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Shell words: spaces split, double or single quotes group. */
const words = (line: string) => [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3]!);

let daemon: TestDaemon;
let receiver: Receiver;
let listener: ResultPromise | undefined;

beforeAll(async () => {
  daemon = await startTestDaemon();
  receiver = await startReceiver();
});
afterAll(async () => {
  listener?.kill('SIGINT');
  await listener?.catch(() => {});
  await receiver?.close();
  await daemon?.close();
});

describe('the README', () => {
  it('runs its quick start and tour in order: sign up, login, org create, fixtures, products list, listen, trigger', { timeout: 180_000 }, async () => {
    const lines = [...commandsOf('Quick start'), ...commandsOf('A tour: a demo store and its webhooks')];
    const env = { TILL_SERVER: daemon.url, TILL_CONFIG_DIR: tempConfigDir() };
    const done: string[] = [];
    let user: TestUser | undefined;
    let listenOutput = '';

    for (const line of lines) {
      const argv = words(line);
      // The daemon is the test's; the suite is what runs this.
      if (argv[0] === 'npm') {
        expect(['npm install && npm start', 'npm test']).toContain(line);
        continue;
      }
      if (argv[0] === 'open') {
        expect(argv[1]).toBe('http://127.0.0.1:4010/sign-up');
        user = await signUp(daemon.url, 'Tour Guide');
        done.push('sign-up');
        continue;
      }
      expect(argv.slice(0, 2), `a README command the tour test does not know: ${line}`).toEqual(['node', 'bin/till']);
      const args = argv.slice(2).map((arg) => (arg === 'http://127.0.0.1:3000/webhooks' ? receiver.url : arg));
      const command = args.filter((arg) => !arg.startsWith('-')).slice(0, 2).join(' ');

      if (args[0] === 'login') {
        // Off a terminal the first line is the code as JSON; the browser's approval is the /device page's calls.
        const child = execa(process.execPath, [TILL_BIN, ...args], { env: tillEnv(env), extendEnv: false, reject: false, timeout: 60_000 });
        const code = JSON.parse(await firstLine(child)) as { user_code: string };
        await decide(daemon.url, user!.token, code.user_code, 'approve');
        const result = await child;
        expect(result.exitCode, `${line}: ${result.stderr}`).toBe(0);
        done.push('login');
        continue;
      }
      if (args[0] === 'listen') {
        // "in another terminal": it runs alongside the next commands.
        listener = execa(process.execPath, [TILL_BIN, ...args, '--timeout', '60'], { env: tillEnv(env), extendEnv: false, reject: false });
        listener.stdout!.on('data', (chunk: Buffer) => (listenOutput += chunk.toString()));
        listener.stderr!.on('data', (chunk: Buffer) => (listenOutput += chunk.toString()));
        await expect.poll(() => listenOutput, { timeout: 30_000 }).toContain('Ready!');
        done.push('listen');
        continue;
      }
      const result = await till(args, env);
      expect(result.exitCode, `${line}: ${result.stderr}`).toBe(0);
      if (command === 'products list') expect(result.stdout.split('\n').filter(Boolean)).toHaveLength(3);
      if (args[0] === 'trigger') {
        const type = args[1]!;
        // The event the trigger made reaches the app `till listen` forwards to.
        await expect
          .poll(() => receiver.received.some((request) => JSON.parse(request.body).type === type), { timeout: 30_000 })
          .toBe(true);
      }
      done.push(command);
    }

    // The tour's steps, in this order (other commands may come between).
    const expected = ['sign-up', 'login', 'orgs create', 'fixtures run', 'products list', 'listen', expect.stringMatching(/^trigger /)];
    const seen = done.filter((step) => ['sign-up', 'login', 'orgs create', 'fixtures run', 'products list', 'listen'].includes(step) || step.startsWith('trigger '));
    expect(seen).toEqual(expected);
  });
});
