import type { TillAuth } from '../../../core/auth/auth.js';
import type { Clock } from '../../../core/clock.js';
import type { Database } from '../../../core/db/database.js';

/** What /v1 handlers are given. */
export interface V1Deps {
  db: Database;
  auth: TillAuth;
  clock: Clock;
  /** Seconds a session stays fresh enough to mint access tokens; 0 turns the check off. */
  sessionFreshAge: number;
}
