/**
 * The catalog nouns, as `till --help` lists them. This table is all the start-up path loads: a noun's verbs and
 * flags (cli/resources/specs/) load when that noun is used, so `till --help` and `till --version` stay fast.
 */
export const CATALOG_NOUNS: readonly { noun: string; description: string }[] = [
  { noun: 'orgs', description: 'your organizations: create, list, show, change, pick the default one (`till orgs use`)' },
  { noun: 'tokens', description: 'organization access tokens for CI and servers (shown once, at creation)' },
  { noun: 'products', description: 'products and their prices' },
  { noun: 'benefits', description: 'benefits products grant: custom notes, downloadables, license keys, Discord, GitHub, meter credits' },
  { noun: 'custom-fields', description: 'custom fields checkouts ask customers to fill in' },
  { noun: 'discounts', description: 'discounts: fixed or percentage, once, forever or repeating, with optional codes' },
  { noun: 'customers', description: 'customers, by id or by your external id' },
  { noun: 'files', description: 'files: upload product media, downloadables and avatars; list, rename, delete' },
  { noun: 'checkouts', description: 'checkouts: payment pages for products; create, list, show, `open` the hosted page' },
  { noun: 'checkout-links', description: 'checkout links: shareable URLs that open a fresh checkout for their products' },
  { noun: 'orders', description: 'orders: list, show, set billing details, save the invoice PDF (`till orders invoice`)' },
  { noun: 'subscriptions', description: 'subscriptions: list, show, cancel at period end, uncancel, revoke now, change product or discount' },
  { noun: 'refunds', description: 'refunds of paid orders: create (shows what is refundable, asks first) and list' },
  { noun: 'license-keys', description: 'license keys benefits issued: list, show, update; validate, activate and deactivate as an app would' },
  { noun: 'events', description: 'usage events: ingest a file (`till events ingest`), list, show, the names seen' },
  { noun: 'meters', description: 'meters: what usage counts and how; `till meters quantities` charts it' },
  { noun: 'customer-meters', description: "each customer's consumption, credits and balance on a meter" },
  { noun: 'webhooks', description: 'webhook endpoints: create, list, update, delete, rotate-secret; deliveries and redeliver' },
];
