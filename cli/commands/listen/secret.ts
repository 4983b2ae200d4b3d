import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from '../../auth/profiles.js';
import { CliError, EXIT } from '../../errors.js';
import type { Env } from '../../output.js';

/** Where `till listen` keeps its signing secrets, one per server (profile), beside config.json. */
export const secretsFile = (env: Env) => join(configDir(env), 'listen.json');

interface SecretsFile {
  secrets?: Record<string, string>;
}

/**
 * The secret `till listen` signs forwarded events with for `server`: made on first use (`whsec_` + 32 random
 * bytes, like an endpoint's) and kept, so the receiving app is configured once.
 */
export function listenSecret(env: Env, server: string): string {
  const file = secretsFile(env);
  let content: SecretsFile = {};
  try {
    content = JSON.parse(readFileSync(file, 'utf8')) as SecretsFile;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new CliError('CONFIG_INVALID', `Cannot read ${file}: ${(error as Error).message}`, EXIT.error, 'Fix or delete that file (a new secret is then made).');
    }
  }
  const existing = content.secrets?.[server];
  if (typeof existing === 'string' && existing) return existing;
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  mkdirSync(configDir(env), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ ...content, secrets: { ...content.secrets, [server]: secret } }, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
  return secret;
}
