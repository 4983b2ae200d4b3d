import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['core/**/*.test.ts', 'daemon/**/*.test.{ts,tsx}', 'cli/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most test files wait on daemons, browsers and child processes rather than compute: three files at a time
    // keep two cores busy (vitest's default on a 2-core machine is one file at a time).
    maxWorkers: 3,
    globalSetup: ['core/testing/global-setup.ts'],
  },
});
