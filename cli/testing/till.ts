import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';

/** The built CLI, as users run it (vitest's global setup builds it first). */
export const TILL_BIN = fileURLToPath(new URL('../../bin/till', import.meta.url));

/** A config directory of the test's own. */
export const tempConfigDir = () => mkdtempSync(join(tmpdir(), 'till-cli-'));

/** The environment `till` sees: only what the test gives, plus PATH, HOME inside the temp dir, no TTY. */
export function tillEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: env.TILL_CONFIG_DIR ?? tmpdir(), ...env };
}

/** Runs the built `till` off a terminal; resolves whatever the exit code. */
export function till(args: string[], env: Record<string, string>): ResultPromise<{ reject: false; extendEnv: false }> {
  return execa(process.execPath, [TILL_BIN, ...args], { env: tillEnv(env), extendEnv: false, reject: false, timeout: 90_000 });
}

/** The first line a running `till` writes to stdout. */
export function firstLine(child: { stdout: NodeJS.ReadableStream | null }): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const end = seen.indexOf('\n');
      if (end >= 0) resolve(seen.slice(0, end));
    });
    child.stdout!.on('end', () => reject(new Error(`stdout ended before a full line: ${JSON.stringify(seen)}`)));
  });
}

export interface TestUser {
  token: string;
  email: string;
  name: string;
}

/** Signs a new user up over HTTP and returns the session token (the bearer plugin's set-auth-token header). */
export async function signUp(server: string, name = 'Ada Lovelace'): Promise<TestUser> {
  const email = `user-${randomBytes(4).toString('hex')}@example.com`;
  const response = await fetch(`${server}/api/auth/sign-up/email`, {
    method: 'POST',
    // Node's fetch sends Sec-Fetch-Mode, so Better Auth checks the Origin as it would a browser's.
    headers: { 'content-type': 'application/json', origin: server },
    body: JSON.stringify({ name, email, password: 'correct-horse-battery-staple' }),
  });
  const token = response.headers.get('set-auth-token');
  if (!response.ok || !token) throw new Error(`sign-up failed: ${response.status} ${await response.text()}`);
  return { token, email, name };
}

/** Approves or denies a user code as the /device page does: viewing it signed in claims it, then the decision. */
export async function decide(server: string, token: string, userCode: string, decision: 'approve' | 'deny'): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: server };
  const claim = await fetch(`${server}/api/auth/device?user_code=${encodeURIComponent(userCode)}`, { headers });
  if (!claim.ok) throw new Error(`claiming the code failed: ${claim.status} ${await claim.text()}`);
  const response = await fetch(`${server}/api/auth/device/${decision}`, { method: 'POST', headers, body: JSON.stringify({ userCode }) });
  if (!response.ok) throw new Error(`${decision} failed: ${response.status} ${await response.text()}`);
}

/** The session a token stands for on the server, straight from the API (null once revoked). */
export async function serverSession(server: string, token: string): Promise<{ user: { id: string; email: string } } | null> {
  const response = await fetch(`${server}/api/auth/get-session`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()) as { user: { id: string; email: string } } | null;
}

/** Runs `till login` against `server`, approves the code as a new user, and returns what happened. */
export async function loginAs(server: string, configDir: string, name = 'Ada Lovelace') {
  const child = till(['login', '--server', server], { TILL_CONFIG_DIR: configDir });
  const code = JSON.parse(await firstLine(child)) as { user_code: string; verification_uri_complete: string; expires_in: number };
  const user = await signUp(server, name);
  await decide(server, user.token, code.user_code, 'approve');
  return { result: await child, code, user };
}

/** A 127.0.0.1 URL on which nothing listens. */
export async function deadServer(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}
