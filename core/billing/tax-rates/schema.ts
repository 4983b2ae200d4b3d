import { z } from 'zod';
import { ADDRESS_COUNTRIES, AddressInput } from '../customers/address.js';

/**
 * POST /v1/tax-rates (a Till extension): the rate an organization charges in a country, or in one state of it.
 * The state is written the way billing addresses are (`US-NY`, `CA-QC`), so the two compare equal.
 */
export const TaxRateCreate = z
  .object({
    country: z.string().transform((value) => value.trim().toUpperCase()).pipe(z.enum(ADDRESS_COUNTRIES, { error: 'Not a supported ISO 3166-1 alpha-2 country code' })),
    state: z.string().trim().min(1).max(64).nullish(),
    basis_points: z.number().int().min(0, 'Use 0 to 10000 basis points (0–100 %)').max(10_000, 'Use 0 to 10000 basis points (0–100 %)'),
    organization_id: z.string().min(1).nullish(),
  })
  .transform((input, context) => {
    if (!input.state) return { ...input, state: null };
    // Normalized exactly as a billing address's state is, so a checkout's address finds the rate.
    const parsed = AddressInput.safeParse({ country: input.country, state: input.state });
    if (!parsed.success) {
      context.addIssue({ code: 'custom', path: ['state'], message: `Invalid ${input.country} state`, input: input.state });
      return z.NEVER;
    }
    return { ...input, state: parsed.data.state };
  });
export type TaxRateCreate = z.output<typeof TaxRateCreate>;

export interface TaxRate {
  id: string;
  organizationId: string;
  country: string;
  /** null: the rate of the whole country (states without their own rate). */
  state: string | null;
  basisPoints: number;
  createdAt: Date;
  modifiedAt: Date | null;
}
