import { z } from 'zod';
import { Metadata } from '../shared/metadata.js';

/**
 * The benefit types Till defines (SPEC §3). @polar-sh/sdk 0.49 also knows `feature_flag` and
 * `slack_shared_channel`; Till offers neither (no Slack integration, and flags come with grants).
 */
export const BENEFIT_TYPES = ['custom', 'discord', 'github_repository', 'downloadables', 'license_keys', 'meter_credit'] as const;
export type BenefitType = (typeof BENEFIT_TYPES)[number];

/** Every type the SDK may send as a list filter; the two Till lacks simply match nothing. */
export const SDK_BENEFIT_TYPES = [...BENEFIT_TYPES, 'feature_flag', 'slack_shared_channel'] as const;

export const VISIBILITIES = ['draft', 'private', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** Types whose customer-portal visibility the seller chooses (those whose Polar update schema has it). */
export const VISIBILITY_CONFIGURABLE: ReadonlySet<BenefitType> = new Set(['custom', 'license_keys', 'meter_credit']);

export const GITHUB_PERMISSIONS = ['pull', 'triage', 'push', 'maintain', 'admin'] as const;

const Description = z.string().min(3, 'At least 3 characters').max(42, 'At most 42 characters');
const DiscordId = z.string().regex(/^\d{1,20}$/, 'Expected a Discord id (digits)');
const Int32 = z.number().int().max(2_147_483_647);

const CustomProperties = z.object({ note: z.string().nullish() });

/** `guild_token` is the signed token Till mints for a Discord server its bot is in (guild-token.ts). */
const DiscordProperties = z.object({ guild_token: z.string().min(1).max(2048), role_id: DiscordId, kick_member: z.boolean() });

const GitHubRepositoryProperties = z.object({
  repository_owner: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/, 'Expected a GitHub user or organization name'),
  repository_name: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'Expected a GitHub repository name')
    .refine((name) => name !== '.' && name !== '..', 'Expected a GitHub repository name'),
  permission: z.enum(GITHUB_PERMISSIONS),
});

const DownloadablesProperties = z.object({
  files: z.array(z.string().min(1)).min(1, 'At least one file').max(1000),
  archived: z.record(z.string(), z.boolean()).default({}),
});

// Polar's bounds: a key may live up to 457 years, 1200 months or 36500 days.
const TTL_MAX = { year: 457, month: 1200, day: 36500 } as const;
const LicenseKeyExpiration = z
  .object({ ttl: z.number().int().positive(), timeframe: z.enum(['year', 'month', 'day']) })
  .refine((expires) => expires.ttl <= TTL_MAX[expires.timeframe], { message: 'ttl exceeds the maximum for its timeframe (457 years, 1200 months, 36500 days)', path: ['ttl'] });

const LicenseKeysProperties = z.object({
  prefix: z.string().nullish(),
  expires: LicenseKeyExpiration.nullish(),
  activations: z.object({ limit: Int32.positive(), enable_customer_admin: z.boolean() }).nullish(),
  limit_usage: z.number().int().positive().nullish(),
});

/** Meters come in a later issue: `meter_id` is taken and kept as given. */
const MeterCreditProperties = z.object({ units: Int32.positive(), rollover: z.boolean(), meter_id: z.uuid() });

const PROPERTIES = {
  custom: CustomProperties,
  discord: DiscordProperties,
  github_repository: GitHubRepositoryProperties,
  downloadables: DownloadablesProperties,
  license_keys: LicenseKeysProperties,
  meter_credit: MeterCreditProperties,
} as const;

const unsupportedType = {
  error: `Expected a benefit type: one of ${BENEFIT_TYPES.join(', ')} (Till does not offer feature_flag or slack_shared_channel)`,
};

const CreateBase = z.object({
  description: Description,
  organization_id: z.string().min(1).nullish(),
  visibility: z.enum(VISIBILITIES).nullish(),
  metadata: Metadata.default({}),
});
const create = <T extends BenefitType>(type: T) => CreateBase.extend({ type: z.literal(type), properties: PROPERTIES[type] });

/** POST /v1/benefits/: the literal `type` selects which properties are validated. */
export const BenefitCreate = z.discriminatedUnion(
  'type',
  [create('custom'), create('discord'), create('github_repository'), create('downloadables'), create('license_keys'), create('meter_credit')],
  unsupportedType,
);
export type BenefitCreate = z.infer<typeof BenefitCreate>;

const UpdateBase = z.object({
  description: Description.nullish(),
  metadata: Metadata.optional(),
  // Applied to the types whose visibility is configurable, ignored for the others (as Polar does).
  visibility: z.enum(VISIBILITIES).nullish(),
});
const update = <T extends BenefitType>(type: T) => UpdateBase.extend({ type: z.literal(type), properties: PROPERTIES[type].nullish() });

/**
 * PATCH /v1/benefits/{id}: `type` must be the benefit's own; `properties` replace the stored ones whole;
 * a `null` description or properties leaves them as they are.
 */
export const BenefitUpdate = z.discriminatedUnion(
  'type',
  [update('custom'), update('discord'), update('github_repository'), update('downloadables'), update('license_keys'), update('meter_credit')],
  unsupportedType,
);
export type BenefitUpdate = z.infer<typeof BenefitUpdate>;

/** Properties as given on write, per type. */
export type PropertiesInput = { [T in BenefitType]: { type: T; properties: z.infer<(typeof PROPERTIES)[T]> } }[BenefitType];

/**
 * Properties as stored and returned, per type. They are kept in their wire shape (snake_case), as Polar
 * keeps them: the serializer writes them out unchanged. No credential is ever among them.
 */
export interface StoredProperties {
  custom: { note: string | null };
  discord: { guild_id: string; role_id: string; kick_member: boolean; guild_token: string };
  github_repository: z.infer<typeof GitHubRepositoryProperties>;
  downloadables: { archived: Record<string, boolean>; files: string[] };
  license_keys: {
    prefix: string | null;
    expires: { ttl: number; timeframe: 'year' | 'month' | 'day' } | null;
    activations: { limit: number; enable_customer_admin: boolean } | null;
    limit_usage: number | null;
  };
  meter_credit: { units: number; rollover: boolean; meter_id: string };
}

interface BenefitBase {
  id: string;
  organizationId: string;
  description: string;
  selectable: boolean;
  deletable: boolean;
  /** null reads as "public". */
  visibility: Visibility | null;
  metadata: Metadata;
  createdAt: Date;
  modifiedAt: Date | null;
  deletedAt: Date | null;
}

/** A benefit as core knows it: its type decides the shape of its properties. */
export type Benefit = { [T in BenefitType]: BenefitBase & { type: T; properties: StoredProperties[T] } }[BenefitType];
