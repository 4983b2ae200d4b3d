import { relative } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first. Vitest orders files by the durations of its last run when its cache
 * (node_modules/.vite) has them, and otherwise by file size, so on a fresh checkout (CI runs `npm ci`) the crash test,
 * a short file that runs for minutes, came last and ran alone at the end for about three of the suite's seven minutes.
 * These start first whatever the cache says; the rest keep vitest's order.
 */
const LONGEST_FIRST = [
  'daemon/webhooks/crash.test.ts',
  'daemon/payments-crash.test.ts',
  'daemon/metering-crash.test.ts',
  'daemon/fuzz.test.ts',
  'cli/commands/events-ingest/ingest.test.ts',
  'core/auth/knex-adapter.test.ts',
  'daemon/pages/checkout.test.ts',
  'daemon/pages/device.test.ts',
  'daemon/pages/account.test.ts',
  'daemon/pages/oidc-chromium.test.ts',
  'daemon/pages/email.test.ts',
];

class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.indexOf(relative(file.project.config.root, file.moduleId).split('\\').join('/'));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    // Array.prototype.sort is stable: files outside the list keep the order vitest chose.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * Test files that never open a database: pure functions, the CLI against fake servers or none, the TUI against a fake
 * backend. They run in the SQLite pass; the PostgreSQL pass (TILL_TEST_DATABASE_URL set) skips them, since they would
 * only repeat identical work. The list is explicit: a new file runs in both passes until it is added here, and a file
 * listed here must not start a daemon, create a test database or read TILL_TEST_DATABASE_URL.
 */
const DATABASE_FREE = [
  'cli/api/retry.test.ts',
  'cli/catalog/plan.test.ts',
  'cli/catalog/schema.test.ts',
  'cli/auth/device-api.test.ts',
  'cli/auth/device-login.test.ts',
  'cli/bundle.test.ts',
  'cli/input/pairs.test.ts',
  'cli/input/price.test.ts',
  'cli/main.test.ts',
  'cli/resources/fields.test.ts',
  'cli/resources/help.test.ts',
  'cli/ui/sparkline.test.ts',
  'cli/ui/tui/App.test.tsx',
  'cli/ui/tui/SignIn.test.tsx',
  'cli/ui/tui/event-store.test.ts',
  'cli/ui/tui/key-chunks.test.ts',
  'cli/ui/tui/tabs/ResourceTab.test.tsx',
  'cli/ui/tui/tabs/meters.test.tsx',
  'cli/ui/tui/tabs/resend.test.tsx',
  'core/auth/verify-token.test.ts',
  'core/billing/benefits/guild-token.test.ts',
  'core/billing/checkouts/custom-field-data.test.ts',
  'core/billing/customers/tax-id.test.ts',
  'core/billing/files/local-storage.test.ts',
  'core/billing/files/serialize.test.ts',
  'core/billing/orders/invoice.test.ts',
  'core/billing/pricing/amounts.test.ts',
  'core/billing/products/prices.test.ts',
  'core/db/columns.test.ts',
  'core/payments/stripe/fake.test.ts',
  'core/payments/stripe/processor.test.ts',
  'core/webhooks/address.test.ts',
  'core/webhooks/send.test.ts',
  'core/webhooks/signing.test.ts',
  'daemon/config.test.ts',
  'daemon/http/request-context.test.ts',
  'daemon/pages/auth-errors.test.ts',
  'daemon/pages/checkout/form.test.ts',
  'daemon/pages/checkout/money.test.ts',
  'daemon/pages/checkout/views/views.test.tsx',
];

/**
 * Files that need a process of their own. Everything else shares a process per worker (`isolate: false`): a file
 * then reuses the modules the worker already loaded (Better Auth, knex, Express, React and all of Till) instead of
 * loading them again, about 1.5 s of CPU per file (12 daemon/routes files: 39 s of CPU before, 21 s after). Tests keep no
 * state between files, with one exception: Better Auth keeps rate-limit counters in a Map of its module
 * (better-auth/dist/api/rate-limiter), so a file whose daemon limits requests would count the requests of files
 * before it in the same process. These files run with limiting on; a file added that turns it on belongs here.
 */
const OWN_PROCESS = ['daemon/auth/rate-limit.test.ts', 'daemon/auth/tilld.test.ts', 'daemon/pages/protections.test.ts'];

/**
 * The CLI's end-to-end tests run the built `till` against a daemon; what they test is the CLI (arguments, output,
 * exit codes, prompts), and every route they reach is tested over HTTP on both databases by the daemon's own files.
 * They are about half the suite's time, so the PostgreSQL pass leaves them to the SQLite pass, as it leaves the
 * database-free files.
 */
const CLI = 'cli/**';

/**
 * The pages driven in Chromium: what they add to the HTTP tests of the same pages (daemon/pages/*.test.ts without a
 * browser, which run on both databases) is the browser's side (scripts, focus, layout, navigation), which no database
 * changes. A browser per file is also the costliest thing the suite starts, so the PostgreSQL pass leaves them to
 * the SQLite pass, as it leaves the CLI's end-to-end tests. Every page's forms and the routes behind them still run
 * on PostgreSQL through the HTTP page tests and the daemon's route tests.
 */
const IN_CHROMIUM = [
  'daemon/pages/account-forms.test.ts',
  'daemon/pages/account.test.ts',
  'daemon/pages/checkout-3ds.test.ts',
  'daemon/pages/checkout-stripe.test.ts',
  'daemon/pages/checkout.test.ts',
  'daemon/pages/device.test.ts',
  'daemon/pages/email.test.ts',
  'daemon/pages/oidc-chromium.test.ts',
  'daemon/pages/pay-link.test.ts',
  'daemon/pages/portal-chromium.test.ts',
  'daemon/pages/sign-in.test.ts',
];

const onPostgres = Boolean(process.env.TILL_TEST_DATABASE_URL);
const include = ['core/**/*.test.ts', 'daemon/**/*.test.{ts,tsx}', 'cli/**/*.test.{ts,tsx}'];
// The @polar-sh/sdk 1.x contract suite needs Node 22: it has its own config (vitest.sdk1.config.ts, npm run test:sdk1).
const SDK1_SUITE = 'daemon/contract-sdk1/**';
const exclude = [...configDefaults.exclude, SDK1_SUITE, ...(onPostgres ? [...DATABASE_FREE, CLI, ...IN_CHROMIUM] : [])];

// Generous limits: they stop a hung test, they do not measure speed, and CI may run on a busy machine where a CLI test
// that takes 5 s on a quiet one takes 40 (seen with the load at 15 on 2 cores).
const common = {
  testTimeout: 120_000,
  hookTimeout: 180_000,
  // expect.poll waits for a state to appear: 1 s (vitest's default) is short on a busy machine.
  expect: { poll: { timeout: 30_000 } },
  pool: 'forks',
  sequence: { sequencer: LongestFirstSequencer },
} as const;

export default defineConfig({
  test: {
    ...common,
    // Most test files wait on daemons, browsers and child processes rather than compute: three files at a time
    // keep two cores busy (vitest's default on a 2-core machine is one file at a time).
    maxWorkers: 3,
    projects: [
      {
        // Builds the CLI (CLI tests run the built `till`) and, on PostgreSQL, the migrated template database.
        test: { ...common, name: 'shared', include, exclude: [...exclude, ...OWN_PROCESS], isolate: false, globalSetup: ['core/testing/global-setup.ts'] },
      },
      { test: { ...common, name: 'own-process', include: OWN_PROCESS, exclude, isolate: true } },
    ],
  },
});
