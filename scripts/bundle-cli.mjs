// Bundles the CLI into dist/cli so `till` starts by reading a few files instead of resolving
// hundreds of modules. Terminal-UI code (ink, react) stays in lazily loaded chunks.
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

// Chunk names carry content hashes: clear the old ones so dist/cli holds exactly this build.
rmSync('dist/cli/chunks', { recursive: true, force: true });

await build({
  entryPoints: { till: 'cli/main.ts' },
  outdir: 'dist/cli',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  packages: 'bundle',
  external: ['ink', 'react', 'react-dom', 'ink-*', 'open'],
  chunkNames: 'chunks/[name]-[hash]',
  define: { __TILL_CLI_VERSION__: JSON.stringify(version) },
  banner: { js: "import { createRequire as __tillCreateRequire } from 'node:module'; const require = __tillCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
