import { createRequire } from 'node:module';

let cached: string | undefined;

/** Till's version, read from package.json on first use (core/ sits one level under it, dist/core/ two). */
export function tillVersion(): string {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = require(path) as { name?: string; version?: string };
      if (pkg.name === 'till' && pkg.version) return (cached = pkg.version);
    } catch {
      // try the next level up
    }
  }
  return (cached = '0.0.0');
}
