import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dist = join(import.meta.dirname, '..', 'dist', 'cli');

/** Every file `till` can load: the entry and its lazily loaded chunks. */
function bundleFiles(): { name: string; text: string }[] {
  const chunks = readdirSync(join(dist, 'chunks')).filter((name) => name.endsWith('.js'));
  return [{ name: 'till.js', text: readFileSync(join(dist, 'till.js'), 'utf8') }, ...chunks.map((name) => ({ name, text: readFileSync(join(dist, 'chunks', name), 'utf8') }))];
}

describe('the built CLI', () => {
  it('carries no server code: no better-auth, knex, express, pino or daemon/core modules', () => {
    for (const { name, text } of bundleFiles()) {
      // esbuild names every bundled module in a `// path` comment.
      for (const marker of ['node_modules/better-auth', 'node_modules/knex/', 'node_modules/express/', 'node_modules/pino', '// daemon/', '// core/']) {
        expect(text.includes(marker), `${name} contains ${marker}`).toBe(false);
      }
    }
  });

  it('imports ink and react nowhere on the start-up path', () => {
    const entry = readFileSync(join(dist, 'till.js'), 'utf8');
    expect(entry).not.toMatch(/from ["'](ink|react)["']/);
  });
});
