import type { AppDeps } from '../../app.js';
import { systemClock } from '../../../core/clock.js';
import { downloadKey, grantDownloads } from '../../../core/billing/benefit-grants/downloads.js';
import { listGrants } from '../../../core/billing/benefit-grants/repository.js';
import { stateOf } from '../../../core/billing/benefit-grants/state.js';
import { findBenefit } from '../../../core/billing/benefits/repository.js';
import type { CustomerPrincipal } from '../../../core/billing/customer-sessions/service.js';
import { customersByIds } from '../../../core/billing/customers/repository.js';
import type { Customer } from '../../../core/billing/customers/schema.js';
import { getLicenseKey, listLicenseKeys } from '../../../core/billing/license-keys/service.js';
import { signedInvoiceUrl } from '../../../core/billing/orders/invoice.js';
import { orderDescription } from '../../../core/billing/orders/serialize.js';
import { listOrders } from '../../../core/billing/orders/service.js';
import type { Organization } from '../../../core/billing/organizations/schema.js';
import { toSortCriteria } from '../../../core/billing/shared/query.js';
import { listSubscriptions } from '../../../core/billing/subscriptions/service.js';
import type { SubscriptionView } from '../../../core/billing/subscriptions/relations.js';
import { customersMayChangePlan } from '../../../core/billing/customer-sessions/subscription-update.js';
import { organizationClock } from '../../../core/jobs/clock.js';
import { listCustomerMeters } from '../../../core/metering/customer-meters.js';

/** What the overview shows; every list is of the signed-in customer alone. */
export interface PortalOverview {
  customer: Customer;
  subscriptions: PortalSubscription[];
  orders: PortalOrder[];
  licenseKeys: PortalLicenseKey[];
  downloads: PortalDownload[];
  meters: PortalMeter[];
  benefits: PortalBenefit[];
  /** Whether the seller lets customers change plan here (the overview then offers it). */
  planChanges: boolean;
  /** Whether the seller lets customers change their email address here. */
  emailChanges: boolean;
}

export interface PortalSubscription {
  id: string;
  product: string;
  amount: number;
  currency: string;
  interval: string;
  intervalCount: number;
  status: string;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  endsAt: Date | null;
  cancellationReason: string | null;
}

export interface PortalOrder {
  id: string;
  createdAt: Date;
  description: string;
  totalAmount: number;
  refundedAmount: number;
  currency: string;
  status: string;
  billingReason: string;
  receiptUrl: string | null;
  invoiceNumber: string;
}

export interface PortalLicenseKey {
  id: string;
  key: string;
  displayKey: string;
  benefit: string;
  status: string;
  limitActivations: number | null;
  usage: number;
  limitUsage: number | null;
  expiresAt: Date | null;
  activations: { id: string; label: string; createdAt: Date }[];
}

export interface PortalDownload {
  id: string;
  benefit: string;
  name: string;
  size: number;
  url: string;
}

export interface PortalMeter {
  id: string;
  name: string;
  consumed: number;
  credited: number;
  balance: number;
}

export interface PortalBenefit {
  grantId: string;
  type: string;
  description: string;
  state: 'granted' | 'revoked' | 'pending';
  /** Discord and GitHub benefits: the customer connects an account to receive them. */
  connect: 'github' | 'discord' | null;
  note: string | null;
  error: string | null;
}

/** What the portal's pages show of a subscription. */
export function portalSubscriptionOf({ subscription: s, product }: Pick<SubscriptionView, 'subscription' | 'product'>): PortalSubscription {
  return {
    id: s.id, product: product.name, amount: s.amount, currency: s.currency, interval: s.recurringInterval, intervalCount: s.recurringIntervalCount,
    status: s.status, currentPeriodEnd: s.currentPeriodEnd, cancelAtPeriodEnd: s.cancelAtPeriodEnd, endsAt: s.endsAt, cancellationReason: s.customerCancellationReason,
  };
}

/** A customer holds a handful of each; the overview reads up to this many (newest first). */
const LIMIT = 100;
const PAGE = { page: 1, limit: LIMIT };

export async function loadOverview(deps: AppDeps, principal: CustomerPrincipal, organization: Organization): Promise<PortalOverview> {
  const customer = (await customersByIds(deps.db, [principal.customerId])).get(principal.customerId)!;
  const organizationIds = [organization.id];
  const readable = new Set(organizationIds);
  const customerIds = [customer.id];
  const secret = (await deps.auth.$context).secret;
  const clock = await organizationClock(deps.db, deps.clock ?? systemClock, organization.id);
  const now = clock.now();

  const subscriptions = await listSubscriptions(deps.db, { organizationIds, customerIds, active: true, metadata: {} }, toSortCriteria(['-started_at']), PAGE);
  const orders = await listOrders(deps.db, { organizationIds, customerIds }, toSortCriteria(['-created_at']), PAGE);
  const keys = await listLicenseKeys(deps.db, { organizationIds, customerIds }, PAGE);
  const grants = await listGrants(deps.db, { organizationIds, customerIds }, toSortCriteria(['-granted_at']), PAGE);
  const meters = await listCustomerMeters(deps.db, { organizationIds, customerIds }, toSortCriteria(['created_at']), PAGE);

  const benefits = new Map<string, Awaited<ReturnType<typeof findBenefit>>>();
  const benefitOf = async (id: string) => {
    if (!benefits.has(id)) benefits.set(id, await findBenefit(deps.db, id, organizationIds));
    return benefits.get(id);
  };

  const licenseKeys: PortalLicenseKey[] = [];
  for (const { key } of keys.items) {
    const full = await getLicenseKey(deps.db, readable, key.id);
    licenseKeys.push({
      id: key.id,
      key: key.key,
      displayKey: `****-${key.key.slice(-6)}`,
      benefit: (await benefitOf(key.benefitId))?.description ?? 'License key',
      status: key.status,
      limitActivations: key.limitActivations,
      usage: key.usage,
      limitUsage: key.limitUsage,
      expiresAt: key.expiresAt,
      activations: full.activations.map((activation) => ({ id: activation.id, label: activation.label, createdAt: activation.createdAt })),
    });
  }

  const downloads: PortalDownload[] = [];
  const portalBenefits: PortalBenefit[] = [];
  const link = { key: downloadKey(secret), baseUrl: deps.baseUrl };
  for (const grant of grants.items) {
    const benefit = await benefitOf(grant.benefitId);
    if (!benefit) continue;
    const state = stateOf(grant);
    if (benefit.type === 'downloadables' && state === 'granted') {
      for (const file of await grantDownloads(deps.db, clock, readable, grant.id, link)) {
        downloads.push({ id: `${grant.id}:${file.file.id}`, benefit: benefit.description, name: file.file.name, size: file.file.size, url: file.url });
      }
    }
    portalBenefits.push({
      grantId: grant.id,
      type: benefit.type,
      description: benefit.description,
      state,
      connect: benefit.type === 'github_repository' ? 'github' : benefit.type === 'discord' ? 'discord' : null,
      note: benefit.type === 'custom' ? ((benefit.properties as { note?: string | null }).note ?? null) : null,
      error: grant.error ? String((grant.error as { message?: unknown }).message ?? '') || null : null,
    });
  }

  return {
    customer,
    subscriptions: subscriptions.items.map(portalSubscriptionOf),
    planChanges: customersMayChangePlan(organization),
    emailChanges: organization.settings.customer_portal_settings.customer.allow_email_change,
    orders: orders.items.map(({ order, relations }) => ({
      id: order.id,
      createdAt: order.createdAt,
      description: orderDescription(order, relations),
      totalAmount: order.totalAmount,
      refundedAmount: order.refundedAmount,
      currency: order.currency,
      status: order.status,
      billingReason: order.billingReason,
      // The receipt of a paid order needs no billing details; its link works for an hour, like the API's.
      receiptUrl: order.status === 'pending' ? null : signedInvoiceUrl(deps.baseUrl, secret, order.id, now, 'receipt'),
      invoiceNumber: order.invoiceNumber,
    })),
    licenseKeys,
    downloads,
    meters: meters.items.map(({ customerMeter, meter }) => ({
      id: customerMeter.id,
      name: meter.name,
      consumed: customerMeter.consumedUnits,
      credited: customerMeter.creditedUnits,
      balance: customerMeter.balance,
    })),
    benefits: portalBenefits,
  };
}
