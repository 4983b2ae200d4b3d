import type { Clock } from '../clock.js';
import { meterDefinitionChanged } from './customer-meters.js';
import { startRollupBackfill } from './rollups.js';
import { newId } from '../db/columns.js';
import type { Database } from '../db/database.js';
import { CoreError } from '../errors.js';
import type { Page, PageQuery } from '../billing/shared/pagination.js';
import type { SortCriterion } from '../billing/shared/query.js';
import { findMeter, hasMeterBilled, insertMeter, isMeterPriced, listMeters as listRows, saveMeter } from './meters-repository.js';
import { meterQuantities, type Quantities, type QuantitiesQuery } from './quantities.js';
import type { Meter, MeterCreate, MeterUpdate } from './schema.js';

/** The organizations a caller may read in, and those it may also change things in. */
export interface Access {
  read: ReadonlySet<string>;
  write: ReadonlySet<string>;
}

export const meterNotFound = () => new CoreError('not_found', 'METER_NOT_FOUND', 'Meter not found');

export async function createMeter(db: Database, clock: Clock, organizationId: string, input: MeterCreate): Promise<Meter> {
  const meter: Meter = {
    id: newId(),
    organizationId,
    name: input.name,
    filter: input.filter,
    aggregation: input.aggregation,
    unit: input.unit,
    customLabel: input.custom_label ?? null,
    customMultiplier: input.custom_multiplier ?? null,
    metadata: input.metadata ?? {},
    createdAt: clock.now(),
    modifiedAt: null,
    archivedAt: null,
  };
  await db.transaction(async (trx) => {
    await insertMeter(trx, meter);
    // Its rollups are built from the events already there (quantities read the events meanwhile).
    await startRollupBackfill(trx, meter);
  });
  return meter;
}

export async function getMeter(db: Database, readable: ReadonlySet<string>, id: string): Promise<Meter> {
  const meter = await findMeter(db, id, [...readable]);
  if (!meter) throw meterNotFound();
  return meter;
}

export function listMeters(
  db: Database,
  filter: { organizationIds: readonly string[]; query?: string; isArchived?: boolean; metadata?: Record<string, string[]> },
  sorting: readonly SortCriterion[],
  page: PageQuery,
): Promise<Page<Meter>> {
  return listRows(db, filter, sorting, page);
}

/**
 * PATCH /v1/meters/{id}: any field; `is_archived` archives or unarchives. A meter billed by a live price
 * cannot be archived (the price would bill nothing); the row is locked so a price cannot appear meanwhile. Once an
 * order billed its usage, `filter` and `aggregation` are refused (422), as Polar refuses them after its first billed event.
 */
export async function updateMeter(db: Database, clock: Clock, access: Access, id: string, input: MeterUpdate): Promise<Meter> {
  return db.transaction(async (trx) => {
    const current = await findMeter(trx, id, [...access.read], { forUpdate: true });
    if (!current) throw meterNotFound();
    if (!access.write.has(current.organizationId)) throw new CoreError('forbidden', 'NOT_PERMITTED', 'You may read this meter but not change it');
    // As Polar: once the meter has billed, what it counts is fixed (a field given at all is refused, even unchanged).
    const sensitive = (['filter', 'aggregation'] as const).filter((field) => input[field] !== undefined);
    if (sensitive.length && (await hasMeterBilled(trx, current.id))) {
      throw new CoreError(
        'invalid',
        'METER_ALREADY_BILLED',
        "The meter's filter and aggregation can't be changed once it has billed",
        sensitive.map((field) => ({ loc: ['body', field], msg: "This field can't be updated because the meter is already aggregating events.", type: 'forbidden' })),
      );
    }
    let archivedAt = current.archivedAt;
    if (input.is_archived === true && !current.archivedAt) {
      if (await isMeterPriced(trx, current.id)) {
        throw new CoreError('invalid', 'METER_IN_USE', 'This meter is used by a price and cannot be archived', [
          { loc: ['body', 'is_archived'], msg: 'Meter is used by an active price: archive the price (update its product) first.', type: 'value_error' },
        ]);
      }
      archivedAt = clock.now();
    }
    if (input.is_archived === false) archivedAt = null;
    const next: Meter = {
      ...current,
      name: input.name ?? current.name,
      filter: input.filter ?? current.filter,
      aggregation: input.aggregation ?? current.aggregation,
      unit: input.unit ?? current.unit,
      customLabel: input.custom_label === undefined ? current.customLabel : input.custom_label,
      customMultiplier: input.custom_multiplier === undefined ? current.customMultiplier : input.custom_multiplier,
      metadata: input.metadata ?? current.metadata,
      archivedAt,
      modifiedAt: clock.now(),
    };
    await saveMeter(trx, next);
    if (JSON.stringify(next.filter) !== JSON.stringify(current.filter) || JSON.stringify(next.aggregation) !== JSON.stringify(current.aggregation)) {
      // The metering lock first (startRollupBackfill takes it): ingests take it before the usage rows.
      await startRollupBackfill(trx, next);
      await meterDefinitionChanged(trx, clock, next);
    }
    return next;
  });
}

/** GET /v1/meters/{id}/quantities. */
export async function quantitiesOf(db: Database, readable: ReadonlySet<string>, id: string, query: QuantitiesQuery): Promise<Quantities> {
  return meterQuantities(db, await getMeter(db, readable, id), query);
}
