import { defineConfig } from 'vitest/config';

/**
 * The `@polar-sh/sdk` 1.x contract suite. SDK 1.x needs Node 22 while Till runs on Node 20, so this suite has a
 * config of its own and runs under a Node 22 binary (`npm run test:sdk1`, scripts/sdk1-test.sh), against tilld
 * processes on the Node that runs Till. The main config excludes these files.
 */
export default defineConfig({
  test: {
    // The test apps of Polar's integrations (integrations/*) are npm projects of their own, installed by sdk1-test.sh.
    include: ['daemon/contract-sdk1/**/*.test.ts', 'integrations/*/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
