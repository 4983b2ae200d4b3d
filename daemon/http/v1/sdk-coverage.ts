import type { AnyRoute } from './route.js';

/** One operation of @polar-sh/sdk 0.49 as scripts/sdk049-operations.mjs lists it. */
export interface SdkOperation {
  operation: string;
  method: string;
  path: string;
}

/**
 * Why Till does not serve an SDK operation, by operation name or by a `prefix.` covering a group. The coverage
 * test fails on an unserved operation with no reason here, and on a reason left for an operation now served.
 */
export const NOT_SERVED: Record<string, string> = {
  'oauth2.': 'Till is no OAuth 2.0 provider for third-party apps: scripts use organization access tokens, people sign in with `till login` (device flow)',
  'orders.create': 'Till makes orders from checkouts and subscription renewals only; Polar\'s draft orders (create, then finalize) are not built',
  'orders.finalize': 'No draft orders (see `orders.create`)',
  'metrics.export': 'Not built: `metrics.get` answers the same figures as JSON',
  'metrics.listDashboards': 'Dashboards are layouts of Polar\'s web dashboard; Till has none (its metrics are `till metrics` and the TUI)',
  'metrics.createDashboard': 'No dashboards (see `metrics.listDashboards`)',
  'metrics.getDashboard': 'No dashboards (see `metrics.listDashboards`)',
  'metrics.deleteDashboard': 'No dashboards (see `metrics.listDashboards`)',
  'metrics.updateDashboard': 'No dashboards (see `metrics.listDashboards`)',
  'customers.members.': 'Till sells to single customers: no customer members (teams)',
  'members.': 'No customer members (see `customers.members`)',
  'customerSeats.': 'No seat-based prices, so no seats to assign or claim',
  'customerPortal.seats.': 'No seat-based prices',
  'customerPortal.members.': 'No customer members',
  'customerPortal.wallets.': 'No customer wallets (prepaid balances)',
  'customerPortal.orders.confirmRetryPayment': 'A declined renewal is paid through the link Till mails to the customer (`/pay/…`, docs/payments.md), not through this operation',
};

/** A path with its parameters as `{}` and no trailing slash: how an SDK path and an Express path are compared. */
export const pathShape = (path: string) => path.replace(/\{[^}]+\}/g, '{}').replace(/:[A-Za-z_]+/g, '{}').replace(/\/+$/, '');

/** The reason an operation is not served, or undefined when none is written down. */
export function reasonFor(operation: string): string | undefined {
  if (NOT_SERVED[operation]) return NOT_SERVED[operation];
  const prefix = Object.keys(NOT_SERVED)
    .filter((key) => key.endsWith('.') && operation.startsWith(key))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? NOT_SERVED[prefix] : undefined;
}

export interface CoverageRow extends SdkOperation {
  /** Till's operationId serving it, or null. */
  servedBy: string | null;
  reason: string | null;
}

/** Each SDK operation with the Till route that serves it (same method and path) or why none does. */
export function coverage(operations: readonly SdkOperation[], routes: readonly AnyRoute[]): CoverageRow[] {
  const byShape = new Map(routes.map((route) => [`${route.method.toUpperCase()} ${pathShape(route.path)}`, route.operationId]));
  return operations.map((op) => {
    const servedBy = byShape.get(`${op.method} ${pathShape(op.path)}`) ?? null;
    return { ...op, servedBy, reason: servedBy ? null : (reasonFor(op.operation) ?? null) };
  });
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The markdown table of docs/polar-wire-format.md §16, between its markers. */
export function coverageTable(rows: readonly CoverageRow[]): string {
  const served = rows.filter((row) => row.servedBy).length;
  return [
    `${served} of the ${rows.length} operations of \`@polar-sh/sdk\` 0.49 are served.`,
    '',
    '| SDK operation | Method and path | Served | Why not |',
    '|---|---|---|---|',
    ...rows.map((row) => `| \`${row.operation}\` | \`${row.method} ${row.path}\` | ${row.servedBy ? `yes (\`${row.servedBy}\`)` : 'no'} | ${row.reason ? cell(row.reason) : ''} |`),
  ].join('\n');
}
