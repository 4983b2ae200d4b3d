import { createHash } from 'node:crypto';
import type { BenefitCreate } from '@polar-sh/sdk/models/components/benefitcreate.js';
import { systemClock } from '../../core/clock.js';
import { organizationClock } from '../../core/jobs/clock.js';
import { grantBenefits, revokeBenefits } from '../../core/billing/benefit-grants/service.js';
import type { TestDaemon } from './daemon.js';
import { polarSdk } from './v1.js';

/** A customer and a one-time product carrying the given benefits, made through the SDK as a seller would. */
export async function seedProductWithBenefits(daemon: TestDaemon, token: string, organizationId: string, benefits: readonly BenefitCreate[]) {
  const sdk = polarSdk(daemon.url, token);
  const tag = Math.random().toString(36).slice(2, 10);
  const customer = await sdk.customers.create({ organizationId, email: `buyer-${tag}@example.test`, name: 'Bea Buyer', externalId: `ext-${tag}` });
  const created = [];
  for (const benefit of benefits) created.push(await sdk.benefits.create({ ...benefit, organizationId } as BenefitCreate));
  const product = await sdk.products.create({ organizationId, name: `Bundle ${tag}`, prices: [{ amountType: 'fixed', priceAmount: 1900 }] });
  await sdk.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: created.map((b) => b.id) } });
  return { customerId: customer.id, externalId: `ext-${tag}`, productId: product.id, benefitIds: created.map((b) => b.id) };
}

/** Grants a product's benefits as a paid order would (the fulfilment contract), on the organization's clock. */
export async function grantForOrder(daemon: TestDaemon, input: { organizationId: string; customerId: string; productId: string; orderId: string }) {
  await daemon.db.transaction(async (trx) => {
    const clock = await organizationClock(trx, systemClock, input.organizationId);
    await grantBenefits(trx, clock, { ...input, subscriptionId: null });
  });
}

export async function revokeForOrder(daemon: TestDaemon, input: { organizationId: string; customerId: string; orderId: string }) {
  await daemon.db.transaction(async (trx) => {
    const clock = await organizationClock(trx, systemClock, input.organizationId);
    await revokeBenefits(trx, clock, input);
  });
}

/** Uploads `bytes` as a downloadable file of the organization through the SDK's three-step upload; answers its id. */
export async function uploadDownloadable(daemon: TestDaemon, token: string, organizationId: string, bytes: Buffer, name = 'guide.pdf'): Promise<string> {
  const sdk = polarSdk(daemon.url, token);
  const upload = await sdk.files.create({
    organizationId,
    service: 'downloadable',
    name,
    mimeType: 'application/pdf',
    size: bytes.length,
    checksumSha256Base64: createHash('sha256').update(bytes).digest('base64'),
    upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: bytes.length }] },
  } as never);
  const put = await fetch(upload.upload.parts[0]!.url, { method: 'PUT', body: new Uint8Array(bytes) });
  await sdk.files.uploaded({
    id: upload.id,
    fileUploadCompleted: { id: upload.upload.id, path: upload.upload.path, parts: [{ number: 1, checksumEtag: put.headers.get('etag')!, checksumSha256Base64: null }] },
  });
  return upload.id;
}
