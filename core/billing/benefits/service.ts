import type { Knex } from 'knex';
import type { Clock } from '../../clock.js';
import { newId } from '../../db/columns.js';
import type { Database } from '../../db/database.js';
import { CoreError } from '../../errors.js';
import { recordEvent } from '../../webhooks/outbox.js';
import { assertUsableFiles } from '../files/service.js';
import type { Page, PageQuery } from '../shared/pagination.js';
import type { SortCriterion } from '../shared/query.js';
import { mintGuildToken, verifyGuildToken } from './guild-token.js';
import { findBenefit, insertBenefit, listBenefits as listRows, softDeleteBenefit, updateBenefitRow, type BenefitFilter } from './repository.js';
import { VISIBILITY_CONFIGURABLE, type Benefit, type BenefitCreate, type BenefitUpdate, type PropertiesInput } from './schema.js';
import { serializeBenefit } from './serialize.js';
import { benefitUpdated, revokeBenefitGrants } from '../benefit-grants/service.js';
import { organizationClock } from '../../jobs/clock.js';

/** The organizations a caller may see benefits of (read scopes) and change them in (write scopes). */
export interface BenefitAccess {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

const notFound = () => new CoreError('not_found', 'BENEFIT_NOT_FOUND', 'Benefit not found');
const invalidProperty = (field: string, msg: string) =>
  new CoreError('invalid', 'INVALID_BENEFIT_PROPERTIES', 'Invalid benefit properties', [{ loc: ['body', 'properties', field], msg, type: 'value_error' }]);

/** Checks what a schema cannot (the guild token, the files) and turns write properties into stored ones. */
async function storedProperties(
  trx: Knex.Transaction,
  context: { organizationId: string; guildKey: Buffer; current?: Benefit },
  input: PropertiesInput,
): Promise<Benefit['properties']> {
  switch (input.type) {
    case 'custom':
      return { note: input.properties.note ?? null };
    case 'discord': {
      const { guild_token, role_id, kick_member } = input.properties;
      const current = context.current?.type === 'discord' ? context.current.properties : undefined;
      // The token the benefit answers with is accepted back as is, even if minted under a previous secret.
      const guildId = guild_token === current?.guild_token ? current.guild_id : verifyGuildToken(context.guildKey, guild_token);
      if (!guildId) throw invalidProperty('guild_token', 'Not a guild token of this Till server: connect the Discord server to get one');
      return { guild_id: guildId, role_id, kick_member, guild_token: mintGuildToken(context.guildKey, guildId) };
    }
    case 'downloadables': {
      const { files, archived } = input.properties;
      await assertUsableFiles(trx, { organizationId: context.organizationId, ids: files, service: 'downloadable', loc: ['body', 'properties', 'files'] });
      return { archived, files };
    }
    case 'license_keys': {
      const { prefix, expires, activations, limit_usage } = input.properties;
      return { prefix: prefix || null, expires: expires ?? null, activations: activations ?? null, limit_usage: limit_usage ?? null };
    }
    case 'github_repository':
    case 'meter_credit':
      return input.properties;
  }
}

/** Creates a benefit and announces it (benefit.created) in the same transaction. */
export async function createBenefit(
  db: Database,
  clock: Clock,
  input: { organizationId: string; request: BenefitCreate; guildKey: Buffer },
): Promise<Benefit> {
  const { organizationId, request } = input;
  return db.transaction(async (trx) => {
    const benefit = {
      id: newId(),
      organizationId,
      type: request.type,
      description: request.description,
      selectable: true,
      deletable: true,
      visibility: VISIBILITY_CONFIGURABLE.has(request.type) ? (request.visibility ?? null) : null,
      metadata: request.metadata,
      properties: await storedProperties(trx, { organizationId, guildKey: input.guildKey }, request as PropertiesInput),
      createdAt: clock.now(),
      modifiedAt: null,
      deletedAt: null,
    } as Benefit;
    await insertBenefit(trx, benefit);
    await recordEvent(trx, clock, { organizationId, type: 'benefit.created', data: serializeBenefit(benefit) });
    return benefit;
  });
}

export async function getBenefit(db: Database, reachable: ReadonlySet<string>, id: string): Promise<Benefit> {
  const benefit = await findBenefit(db, id, reachable);
  if (!benefit) throw notFound();
  return benefit;
}

export function listBenefits(db: Database, filter: BenefitFilter, sorting: readonly SortCriterion[], page: PageQuery): Promise<Page<Benefit>> {
  return listRows(db, filter, sorting, page);
}

async function writableBenefit(trx: Knex.Transaction, access: BenefitAccess, id: string): Promise<Benefit> {
  const benefit = await findBenefit(trx, id, access.read, { forUpdate: true });
  if (!benefit) throw notFound();
  if (!access.write.has(benefit.organizationId)) throw new CoreError('forbidden', 'INSUFFICIENT_SCOPE', 'Changing benefits needs the benefits:write scope');
  return benefit;
}

/** Updates a benefit (never its type) and announces it (benefit.updated) in the same transaction. */
export async function updateBenefit(
  db: Database,
  clock: Clock,
  access: BenefitAccess,
  id: string,
  input: { request: BenefitUpdate; guildKey: Buffer },
): Promise<Benefit> {
  const { request } = input;
  return db.transaction(async (trx) => {
    const current = await writableBenefit(trx, access, id);
    if (request.type !== current.type) {
      throw new CoreError('invalid', 'BENEFIT_TYPE_IMMUTABLE', 'Benefit type cannot be changed', [
        { loc: ['body', 'type'], msg: `Benefit type cannot be changed: this benefit is ${current.type}`, type: 'value_error' },
      ]);
    }
    const next = {
      ...current,
      description: request.description ?? current.description,
      metadata: request.metadata ?? current.metadata,
      visibility: VISIBILITY_CONFIGURABLE.has(current.type) && request.visibility !== undefined ? request.visibility : current.visibility,
      properties: request.properties
        ? await storedProperties(trx, { organizationId: current.organizationId, guildKey: input.guildKey, current }, request as PropertiesInput)
        : current.properties,
      modifiedAt: clock.now(),
    } as Benefit;
    await updateBenefitRow(trx, next);
    await recordEvent(trx, clock, { organizationId: current.organizationId, type: 'benefit.updated', data: serializeBenefit(next) });
    await benefitUpdated(trx, await organizationClock(trx, clock, current.organizationId), next);
    return next;
  });
}

/**
 * Deletes a benefit softly (it reads `is_deleted: true` in the event, and is gone from the API), announced
 * as benefit.updated like Polar, which has no benefit.deleted event. A benefit not deletable is 403.
 */
export async function deleteBenefit(db: Database, clock: Clock, access: BenefitAccess, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const current = await writableBenefit(trx, access, id);
    if (!current.deletable) throw new CoreError('forbidden', 'BENEFIT_NOT_DELETABLE', 'This benefit cannot be deleted');
    const now = clock.now();
    // Its grants are revoked first, while each grant's strategy can still read the benefit (as Polar does).
    await revokeBenefitGrants(trx, await organizationClock(trx, clock, current.organizationId), id);
    if (!(await softDeleteBenefit(trx, id, now))) throw notFound();
    await recordEvent(trx, clock, { organizationId: current.organizationId, type: 'benefit.updated', data: serializeBenefit({ ...current, deletedAt: now, modifiedAt: now }) });
  });
}
