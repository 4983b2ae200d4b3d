import type { Clock } from '../clock.js';
import { dialectOf, type Executor } from '../db/database.js';
import { fromDbBool, fromDbInt, toDbTime } from '../db/columns.js';

const TABLE = 'organization_clocks';

export interface OrganizationClockState {
  organizationId: string;
  /** A sandbox organization's clock can be moved forward (POST /v1/organizations/{id}/clock/advance). */
  sandbox: boolean;
  /** How far the organization's clock runs ahead of real time. */
  offsetMs: number;
}

export async function clockState(db: Executor, organizationId: string, options: { forUpdate?: boolean } = {}): Promise<OrganizationClockState> {
  const query = db(TABLE).where({ organization_id: organizationId }).first();
  if (options.forUpdate && dialectOf(db) === 'postgres') query.forUpdate();
  const row = await query;
  return row
    ? { organizationId, sandbox: fromDbBool(row.sandbox), offsetMs: fromDbInt(row.offset_ms) }
    : { organizationId, sandbox: false, offsetMs: 0 };
}

export async function saveClockState(db: Executor, state: OrganizationClockState, at: Date): Promise<void> {
  await db(TABLE)
    .insert({ organization_id: state.organizationId, sandbox: state.sandbox, offset_ms: state.offsetMs, modified_at: toDbTime(at) })
    .onConflict('organization_id')
    .merge(['sandbox', 'offset_ms', 'modified_at']);
}

/**
 * Moves an organization's clock forward to `offsetMs`, never back: a guarded update that leaves a clock already
 * further ahead alone. True when it moved.
 */
export async function moveClockForward(db: Executor, organizationId: string, offsetMs: number, at: Date): Promise<boolean> {
  const updated = await db(TABLE)
    .where({ organization_id: organizationId })
    .andWhere('offset_ms', '<', offsetMs)
    .update({ offset_ms: offsetMs, modified_at: toDbTime(at) });
  return updated > 0;
}

/** A clock `offsetMs` ahead of `base`. */
export const offsetClock = (base: Clock, offsetMs: number): Clock => (offsetMs === 0 ? base : { now: () => new Date(base.now().getTime() + offsetMs) });

/**
 * The clock of one organization: real time, or for a sandbox organization whose test clock was advanced, that
 * much later. Every time-driven decision about an organization's objects (expiry, renewal, periods) reads it.
 */
export async function organizationClock(db: Executor, base: Clock, organizationId: string): Promise<Clock> {
  const { offsetMs } = await clockState(db, organizationId);
  return offsetClock(base, offsetMs);
}
