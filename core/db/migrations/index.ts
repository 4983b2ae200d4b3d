import type { Migration } from '../migrate.js';
import { authTables } from './0001_auth.js';

/** The ordered migration history. Append only: never edit a migration that has shipped. */
export const migrations: readonly Migration[] = [authTables];
