import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** CLI tests run the built `till`, so the suite builds once before any file runs. */
export default function setup() {
  if (process.env.TILL_SKIP_BUILD === '1' && existsSync('dist/cli/till.js')) return;
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
