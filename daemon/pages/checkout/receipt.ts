import type { Database } from '../../../core/db/database.js';
import { findBenefits } from '../../../core/billing/benefits/repository.js';
import { grantsOfScope } from '../../../core/billing/benefit-grants/repository.js';
import { scopeOf } from '../../../core/billing/benefit-grants/schema.js';
import { findFilesByIds } from '../../../core/billing/files/repository.js';
import { findLicenseKey } from '../../../core/billing/license-keys/repository.js';
import { listOrders, serializeOrderView } from '../../../core/billing/orders/service.js';
import type { CheckoutWire } from './types.js';

export type OrderWire = ReturnType<typeof serializeOrderView>;

/** A benefit as the confirmation shows it: what it is, and what the customer got from it. */
export interface ReceivedBenefit {
  id: string;
  type: string;
  description: string;
  /** custom: the seller's note. */
  note?: string;
  /** license_keys: the key itself (the customer bought it; the client secret is the proof). */
  licenseKey?: { key: string; expiresAt: string | null; activationLimit: number | null };
  /** downloadables: the files' names. */
  files?: string[];
  /** A grant that could not be made (e.g. an integration without credentials). */
  error?: string;
  granted: boolean;
}

export interface Receipt {
  order: OrderWire | null;
  benefits: ReceivedBenefit[];
}

/**
 * What a paid checkout produced: its order (the receipt) and the benefits granted for it. Read after the
 * fact, so a page reload shows the same; a benefit still being granted shows as pending.
 */
export async function loadReceipt(db: Database, checkout: CheckoutWire): Promise<Receipt> {
  const page = await listOrders(db, { organizationIds: [checkout.organization_id], checkoutIds: [checkout.id] }, [{ column: 'created_at', order: 'asc' }], { page: 1, limit: 1 });
  const order = page.items[0] ? serializeOrderView(page.items[0]) : null;
  if (!order) return { order: null, benefits: [] };
  const grants = await grantsOfScope(db, order.customer_id, scopeOf({ subscriptionId: order.subscription_id, orderId: order.id }));
  const benefits = new Map((await findBenefits(db, checkout.organization_id, grants.map((grant) => grant.benefitId))).map((benefit) => [benefit.id, benefit]));
  const received: ReceivedBenefit[] = [];
  for (const grant of grants) {
    const benefit = benefits.get(grant.benefitId);
    if (!benefit || grant.revokedAt) continue;
    const item: ReceivedBenefit = { id: benefit.id, type: benefit.type, description: benefit.description, granted: grant.grantedAt !== null, error: grant.error?.message };
    const properties = benefit.properties as Record<string, unknown>;
    if (benefit.type === 'custom' && typeof properties.note === 'string' && properties.note) item.note = properties.note;
    if (benefit.type === 'license_keys' && typeof grant.properties.license_key_id === 'string') {
      const key = await findLicenseKey(db, grant.properties.license_key_id, [checkout.organization_id]);
      if (key) item.licenseKey = { key: key.key, expiresAt: key.expiresAt?.toISOString() ?? null, activationLimit: key.limitActivations ?? null };
    }
    if (benefit.type === 'downloadables' && Array.isArray(grant.properties.files)) {
      const files = await findFilesByIds(db, grant.properties.files.filter((id): id is string => typeof id === 'string'));
      item.files = [...files.values()].map((file) => file.name);
    }
    received.push(item);
  }
  return { order, benefits: received };
}
