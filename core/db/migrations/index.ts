import type { Migration } from '../migrate.js';
import { authTables } from './0001_auth.js';
import { outbox } from './0002_outbox.js';
import { organizations } from './0003_organizations.js';

/** The ordered migration history. Append only: never edit a migration that has shipped. */
export const migrations: readonly Migration[] = [authTables, outbox, organizations];
