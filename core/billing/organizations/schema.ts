import { z } from 'zod';
import { CURRENCIES } from '../shared/currencies.js';
import { OrganizationName, OrganizationSlug } from './slug.js';

export const SOCIAL_PLATFORMS = ['x', 'github', 'facebook', 'instagram', 'youtube', 'tiktok', 'linkedin', 'threads', 'discord', 'other'] as const;

export const Social = z.object({ platform: z.enum(SOCIAL_PLATFORMS), url: z.url({ protocol: /^https?$/ }).max(512) });

export const FeatureSettings = z.object({
  issue_funding_enabled: z.boolean().default(false),
  seat_based_pricing_enabled: z.boolean().default(false),
  member_model_enabled: z.boolean().default(false),
  checkout_localization_enabled: z.boolean().default(false),
});

export const SubscriptionSettings = z.object({
  allow_multiple_subscriptions: z.boolean().default(false),
  allow_customer_updates: z.boolean().default(true),
  proration_behavior: z.enum(['invoice', 'prorate']).default('prorate'),
  benefit_revocation_grace_period: z.number().int().min(0).default(0),
  prevent_trial_abuse: z.boolean().default(false),
});

export const NotificationSettings = z.object({
  new_order: z.boolean().default(true),
  new_subscription: z.boolean().default(true),
});

const CUSTOMER_EMAILS = [
  'order_confirmation', 'subscription_cancellation', 'subscription_confirmation', 'subscription_cycled',
  'subscription_cycled_after_trial', 'subscription_past_due', 'subscription_paused', 'subscription_resumed',
  'subscription_renewal_reminder', 'subscription_revoked', 'subscription_trial_conversion_reminder',
  'subscription_uncanceled', 'subscription_updated', 'payment_method_expiration_reminder',
] as const;
export const CustomerEmailSettings = z.object(Object.fromEntries(CUSTOMER_EMAILS.map((key) => [key, z.boolean().default(true)])) as Record<(typeof CUSTOMER_EMAILS)[number], z.ZodDefault<z.ZodBoolean>>);

export const CustomerPortalSettings = z.object({
  usage: z.object({ show: z.boolean().default(true) }).prefault({}),
  subscription: z.object({ update_seats: z.boolean().default(true), update_plan: z.boolean().default(true) }).prefault({}),
  // Whether customers may change their email address in the portal; off by default, as in Polar.
  customer: z.object({ allow_email_change: z.boolean().default(false) }).prefault({}),
});

export const TAX_BEHAVIORS = ['location', 'inclusive', 'exclusive'] as const;

/** Billing settings of an organization, complete (defaults filled in). */
export const OrganizationSettings = z.object({
  email: z.email().max(320).nullable().default(null),
  website: z.url({ protocol: /^https?$/ }).max(512).nullable().default(null),
  socials: z.array(Social).max(10).default([]),
  details_submitted_at: z.date().nullable().default(null),
  feature_settings: FeatureSettings.prefault({}),
  subscription_settings: SubscriptionSettings.prefault({}),
  notification_settings: NotificationSettings.prefault({}),
  customer_email_settings: CustomerEmailSettings.prefault({}),
  customer_portal_settings: CustomerPortalSettings.prefault({}),
  default_presentment_currency: z.enum(CURRENCIES).default('usd'),
  default_tax_behavior: z.enum(TAX_BEHAVIORS).default('location'),
  country: z.string().regex(/^[A-Z]{2}$/).nullable().default(null),
});
export type OrganizationSettings = z.infer<typeof OrganizationSettings>;

/**
 * PATCH /v1/organizations/{id}. Every field optional; `null` leaves name and slug as they are and clears
 * the nullable fields (email, website, avatar_url, country). Settings objects replace the stored ones
 * whole, with defaults for what they leave out (the SDK always sends them complete).
 */
export const OrganizationUpdate = z.object({
    name: OrganizationName.nullish(),
    slug: OrganizationSlug.nullish(),
    avatar_url: z.url({ protocol: /^https?$/ }).max(512).nullish(),
    email: z.email().max(320).nullish(),
    website: z.url({ protocol: /^https?$/ }).max(512).nullish(),
    socials: z.array(Social).max(10).nullish(),
    details: z.record(z.string(), z.unknown()).nullish(),
    country: z.string().regex(/^[A-Z]{2}$/).nullish(),
    feature_settings: z.object({ issue_funding_enabled: z.boolean().optional(), seat_based_pricing_enabled: z.boolean().optional(), member_model_enabled: z.boolean().optional(), checkout_localization_enabled: z.boolean().optional() }).nullish(),
    subscription_settings: SubscriptionSettings.partial().nullish(),
    notification_settings: NotificationSettings.partial().nullish(),
    customer_email_settings: CustomerEmailSettings.partial().nullish(),
    customer_portal_settings: CustomerPortalSettings.partial().nullish(),
    default_presentment_currency: z.enum(CURRENCIES).nullish(),
    default_tax_behavior: z.enum(TAX_BEHAVIORS).nullish(),
    sso_enforced: z.boolean().nullish(),
  });
export type OrganizationUpdate = z.infer<typeof OrganizationUpdate>;

/**
 * POST /v1/organizations, the /account form and `till orgs create`. Polar's OrganizationCreate: a name and a
 * slug (Till derives the slug from the name when it is left out) and the same optional settings as an update.
 * `legal_entity` is accepted and not kept: a self-hosted installation files no payout details.
 */
export const OrganizationCreate = OrganizationUpdate.omit({ name: true, slug: true, sso_enforced: true }).extend({
  name: OrganizationName,
  slug: OrganizationSlug.optional(),
  legal_entity: z.record(z.string(), z.unknown()).nullish(),
});
export type OrganizationCreate = z.infer<typeof OrganizationCreate>;

/** An organization as core knows it: Better Auth's row plus the billing settings. */
export interface Organization {
  id: string;
  name: string;
  slug: string;
  avatarUrl: string | null;
  createdAt: Date;
  modifiedAt: Date | null;
  settings: OrganizationSettings;
}
