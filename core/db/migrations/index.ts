import type { Migration } from '../migrate.js';
import { authTables } from './0001_auth.js';
import { outbox } from './0002_outbox.js';
import { organizations } from './0003_organizations.js';
import { customers } from './0004_customers.js';
import { discounts } from './0005_discounts.js';
import { customFields } from './0006_custom_fields.js';
import { files } from './0007_files.js';
import { benefits } from './0008_benefits.js';
import { products } from './0009_products.js';
import { jwks } from './0010_jwks.js';
import { usernames } from './0011_usernames.js';
import { jobsAndClocks } from './0012_jobs_clocks.js';
import { checkouts } from './0013_checkouts.js';
import { subscriptions } from './0014_subscriptions.js';
import { orders } from './0015_orders.js';
import { benefitGrants } from './0016_benefit_grants.js';
import { metering } from './0019_metering.js';
import { webhooks } from './0017_webhooks.js';
import { email } from './0020_email.js';
import { meteringUserIndex } from './0022_metering_user_index.js';
import { idempotencyKeys } from './0035_idempotency_keys.js';
import { paymentIntents } from './0027_payment_intents.js';
import { stripe } from './0030_stripe.js';
import { webhookApiVersions } from './0032_webhook_api_versions.js';
import { customerFirstUserEvent } from './0033_customer_first_user_event.js';
import { catalogKeys } from './0036_catalog_keys.js';
import { customerSessions } from './0037_customer_sessions.js';
import { customerPortal } from './0038_customer_portal.js';
import { discountAmounts } from './0039_discount_amounts.js';
import { payLinks } from './0040_pay_links.js';
import { meterRollups } from './0041_meter_rollups.js';
import { customerOAuthAccounts } from './0042_customer_oauth_accounts.js';
import { checkoutLinks } from './0043_checkout_links.js';
import { metricsIndexes } from './0044_metrics_indexes.js';
import { customerEmailUpdates } from './0045_customer_email_updates.js';
import { eventTypes } from './0046_event_types.js';
import { trialRedemptions } from './0047_trial_redemptions.js';
import { discountRedemptionsPerCustomer } from './0048_discount_redemptions_per_customer.js';
import { fileDownloads } from './0049_file_downloads.js';
import { metricsRollups } from './0050_metrics_rollups.js';
import { metricsRollupsSplit } from './0051_metrics_rollups_split.js';
import { eventsBackfillIndex } from './0052_events_backfill_index.js';
import { hotUpdateRoom } from './0053_hot_update_room.js';

/** The ordered migration history. Append only: never edit a migration that has shipped. */
export const migrations: readonly Migration[] = [
  authTables,
  outbox,
  organizations,
  customers,
  discounts,
  customFields,
  files,
  benefits,
  products,
  jwks,
  usernames,
  jobsAndClocks,
  checkouts,
  subscriptions,
  orders,
  benefitGrants,
  webhooks,
  metering,
  email,
  meteringUserIndex,
  idempotencyKeys,
  paymentIntents,
  stripe,
  webhookApiVersions,
  customerFirstUserEvent,
  catalogKeys,
  customerSessions,
  customerPortal,
  discountAmounts,
  payLinks,
  meterRollups,
  customerOAuthAccounts,
  checkoutLinks,
  metricsIndexes,
  customerEmailUpdates,
  eventTypes,
  trialRedemptions,
  discountRedemptionsPerCustomer,
  fileDownloads,
  metricsRollups,
  metricsRollupsSplit,
  eventsBackfillIndex,
  hotUpdateRoom,
];
