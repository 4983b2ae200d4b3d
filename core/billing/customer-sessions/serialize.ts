import type { Benefit } from '../benefits/schema.js';
import { serializeBenefit } from '../benefits/serialize.js';
import type { BenefitGrant } from '../benefit-grants/schema.js';
import type { Customer } from '../customers/schema.js';
import { serializeCustomer } from '../customers/serialize.js';
import type { OAuthAccountName } from '../oauth-accounts/schema.js';
import type { Organization } from '../organizations/schema.js';
import { serializeOrganization } from '../organizations/serialize.js';
import type { Product } from '../products/schema.js';
import { serializePrice, serializeProductBase } from '../products/serialize.js';
import { serializeFile } from '../files/serialize.js';

/**
 * What the customer portal answers is written for the customer, not the seller: each shape below names its fields
 * (Polar's Customer* schemas) so nothing of the seller's (metadata, custom field answers, fees, settings) leaks.
 */
function pick<T extends Record<string, unknown>, K extends keyof T>(source: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) out[key] = source[key];
  return out;
}

/**
 * Polar's CustomerPortalCustomer: the signed-in customer, with its connected GitHub and Discord accounts keyed as
 * Polar keys them (`{platform}:{account_id}`), their id and username only.
 */
export function serializePortalCustomer(customer: Customer, accounts: readonly OAuthAccountName[]) {
  const wire = serializeCustomer(customer);
  return {
    ...pick(wire, ['created_at', 'modified_at', 'id', 'email', 'email_verified', 'name', 'billing_name', 'billing_address', 'tax_id', 'default_payment_method_id', 'type', 'locale']),
    oauth_accounts: Object.fromEntries(accounts.map((a) => [`${a.platform}:${a.accountId}`, { account_id: a.accountId, account_username: a.accountUsername }])),
  };
}

/** Polar's CustomerOrganization: what a customer sees of the seller, with the settings that decide what they may do in the portal. */
export function serializeCustomerOrganization(organization: Organization) {
  const wire = serializeOrganization(organization);
  const features = organization.settings.feature_settings;
  return {
    ...pick(wire, ['created_at', 'modified_at', 'id', 'name', 'slug', 'avatar_url', 'proration_behavior', 'allow_customer_updates', 'customer_portal_settings']),
    // What the portal may offer: members (never, in Till) and localized pages.
    organization_features: { member_model_enabled: features.member_model_enabled, checkout_localization_enabled: features.checkout_localization_enabled },
  };
}

/** Polar's BenefitPublic: a benefit without its configuration. */
export function serializeBenefitPublic(benefit: Benefit) {
  return pick(serializeBenefit(benefit), ['id', 'created_at', 'modified_at', 'type', 'description', 'selectable', 'deletable', 'is_deleted', 'organization_id']);
}

/** Polar's CustomerOrderProduct / CustomerSubscriptionProduct: the product with its prices, public benefits, media and seller. */
export function serializeCustomerProduct(product: Product, organization: Organization, baseUrl: string) {
  const { metadata: _metadata, is_deletable: _deletable, ...base } = serializeProductBase(product);
  return {
    ...base,
    is_recurring: product.recurringInterval !== null || product.prices.some((price) => price.legacyRecurringInterval !== null),
    prices: product.prices.map((price) => serializePrice(price, product)),
    benefits: product.benefits.map(serializeBenefitPublic),
    medias: product.medias.map((file) => serializeFile(file, baseUrl)),
    organization: serializeCustomerOrganization(organization),
  };
}

/** The customer a grant embeds in the portal is the portal's own customer shape. */
export function serializeCustomerGrant(grant: BenefitGrant, customer: Customer, accounts: readonly OAuthAccountName[], benefit: Benefit, organization: Organization) {
  return {
    id: grant.id,
    created_at: grant.createdAt.toISOString(),
    modified_at: grant.modifiedAt?.toISOString() ?? null,
    granted_at: grant.grantedAt?.toISOString() ?? null,
    revoked_at: grant.revokedAt?.toISOString() ?? null,
    customer_id: grant.customerId,
    member_id: null,
    benefit_id: grant.benefitId,
    subscription_id: grant.subscriptionId,
    order_id: grant.orderId,
    is_granted: grant.grantedAt !== null,
    is_revoked: grant.revokedAt !== null,
    error: grant.error,
    customer: serializePortalCustomer(customer, accounts),
    benefit: serializeBenefitSubscriber(benefit, organization),
    properties: grant.properties,
  };
}

/** The part of a benefit's configuration its subscriber may see (Polar's Benefit*SubscriberProperties). */
function subscriberProperties(type: string, properties: Record<string, unknown>): Record<string, unknown> {
  const only = (keys: readonly string[]) => Object.fromEntries(keys.map((key) => [key, properties[key] ?? null]));
  switch (type) {
    case 'discord':
      return only(['guild_id']);
    case 'github_repository':
      return only(['repository_owner', 'repository_name']);
    case 'license_keys':
      return only(['prefix', 'expires', 'activations', 'limit_usage']);
    case 'meter_credit':
      return only(['units', 'rollover', 'meter_id']);
    case 'custom':
      return only(['note']);
    case 'downloadables': {
      const archived = (properties.archived ?? {}) as Record<string, boolean>;
      const files = Array.isArray(properties.files) ? (properties.files as string[]) : [];
      return { active_files: files.filter((id) => !archived[id]) };
    }
    default:
      return {};
  }
}

/** Polar's Benefit*Subscriber: a public benefit, its seller, and what of its configuration the customer may see. */
export function serializeBenefitSubscriber(benefit: Benefit, organization: Organization) {
  const wire = serializeBenefit(benefit);
  return {
    ...serializeBenefitPublic(benefit),
    organization: serializeCustomerOrganization(organization),
    properties: subscriberProperties(wire.type, wire.properties as Record<string, unknown>),
  };
}

/** Polar's CustomerProduct: a product as the portal lists it (no seller, which the answer names once). */
export function serializePortalProduct(product: Product, organization: Organization, baseUrl: string) {
  const { organization: _organization, ...rest } = serializeCustomerProduct(product, organization, baseUrl);
  return rest;
}
