import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type Options } from 'execa';
import { signUp, type SignedIn } from '../../daemon/testing/auth-client.js';
import type { TestDaemon } from '../../daemon/testing/daemon.js';
import { TILL_BIN, tempConfigDir, till, tillEnv } from './till.js';

/** A signed-up user with an organization of their own, and the environment that makes `till` act as them. */
export interface Seller {
  user: SignedIn;
  organizationId: string;
  slug: string;
  /** TILL_SERVER + TILL_TOKEN (CI mode: no config file is read) and a config dir of its own. */
  env: Record<string, string>;
}

/** Signs a user up and gives them an organization. */
export async function seller(daemon: TestDaemon, name = 'Acme'): Promise<Seller> {
  const user = await signUp(daemon.url, { name: `${name} Owner` });
  const organization = await createOrganization(user, name);
  return { user, ...organization, env: { TILL_SERVER: daemon.url, TILL_TOKEN: user.token, TILL_CONFIG_DIR: tempConfigDir() } };
}

/** Another organization of the same user, through Better Auth (which is where organizations are made). */
export async function createOrganization(user: SignedIn, name: string): Promise<{ organizationId: string; slug: string }> {
  const slug = `${name.toLowerCase().replace(/\W+/g, '-')}-${randomBytes(3).toString('hex')}`;
  const res = await user.client.post('/organization/create', { name, slug });
  if (res.status !== 200) throw new Error(`organization create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { organizationId: res.body.id, slug };
}

/** Runs `till … --json`, expects exit 0 and answers the parsed stdout. */
export async function tillJson<T = any>(args: string[], env: Record<string, string>): Promise<T> {
  const result = await till([...args, '--json'], env);
  if (result.exitCode !== 0) throw new Error(`till ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** Runs `till` with `input` on stdin (e.g. `--data -`). */
export function tillWithInput(args: string[], env: Record<string, string>, input: string) {
  return execa(process.execPath, [TILL_BIN, ...args], { env: tillEnv(env), extendEnv: false, reject: false, timeout: 90_000, input });
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** A question to wait for on the terminal, and the keys to type once it shows. */
export type Answer = [question: string, keys: string];

/**
 * Runs `till` on a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are all TTYs, so tables,
 * prompts and progress bars appear; stdout holds everything the terminal showed. Each answer is typed once its
 * question has appeared, as a person would.
 */
export function tillOnTerminal(args: string[], env: Record<string, string>, answers: Answer[] = []) {
  const command = `stty cols 160 2>/dev/null; ${process.execPath} ${TILL_BIN} ${args.map(quote).join(' ')}`;
  const child = execa('script', ['-qec', command, '/dev/null'], { env: tillEnv({ TERM: 'xterm', ...env }), extendEnv: false, reject: false, timeout: 90_000 } satisfies Options);
  const pending = [...answers];
  let screen = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    screen += chunk.toString();
    const next = pending[0];
    if (next && screen.includes(next[0])) {
      pending.shift();
      screen = '';
      // A moment for the prompt to take the keyboard.
      setTimeout(() => child.stdin!.write(next[1]), 100);
    }
  });
  return child;
}

/** A JSON file in a temp dir, for --data @file. */
export function jsonFile(value: unknown): string {
  const path = join(tempConfigDir(), 'body.json');
  writeFileSync(path, JSON.stringify(value));
  return path;
}
