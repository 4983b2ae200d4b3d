import type { Organization } from './schema.js';

/** The Organization of Polar's API (the one place its wire shape is written). */
export function serializeOrganization(organization: Organization) {
  const s = organization.settings;
  return {
    id: organization.id,
    created_at: organization.createdAt.toISOString(),
    modified_at: organization.modifiedAt?.toISOString() ?? null,
    name: organization.name,
    slug: organization.slug,
    avatar_url: organization.avatarUrl,
    proration_behavior: s.subscription_settings.proration_behavior,
    allow_customer_updates: s.subscription_settings.allow_customer_updates,
    email: s.email,
    website: s.website,
    socials: s.socials,
    // A self-hosted installation reviews nobody: every organization is active and may do everything.
    status: 'active',
    details_submitted_at: s.details_submitted_at?.toISOString() ?? null,
    onboarding_resubmission_requested_at: null,
    sso_enforced: false,
    default_presentment_currency: s.default_presentment_currency,
    default_tax_behavior: s.default_tax_behavior,
    feature_settings: s.feature_settings,
    subscription_settings: s.subscription_settings,
    notification_settings: s.notification_settings,
    customer_email_settings: s.customer_email_settings,
    customer_portal_settings: s.customer_portal_settings,
    // Disputes reach Till only through a payment processor that reports them; none is accepted automatically.
    dispute_settings: { auto_accept_below_amount: null },
    // Till's checkout page is not embeddable on other hosts.
    embed_hosts: [],
    country: s.country,
    account_id: null,
    payout_account_id: null,
    capabilities: { checkout_payments: true, subscription_renewals: true, payouts: true, refunds: true, api_access: true, dashboard_access: true },
  };
}
export type OrganizationWire = ReturnType<typeof serializeOrganization>;
