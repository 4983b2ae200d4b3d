import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Till's version, from package.json (core/ and dist/core/ both sit two levels under it or one). */
export const TILL_VERSION: string = (() => {
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = require(path) as { name?: string; version?: string };
      if (pkg.name === 'till' && pkg.version) return pkg.version;
    } catch {
      // try the next level up
    }
  }
  return '0.0.0';
})();
