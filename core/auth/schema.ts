import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { BetterAuthOptions } from 'better-auth';
import { getAuthTables, type BetterAuthDBSchema, type DBFieldAttribute } from 'better-auth/db';

/**
 * Creates Better Auth's tables for a given configuration with knex's schema builder.
 *
 * Production uses the fixed migration history in core/db/migrations; this builder serves the
 * adapter test suites (which reconfigure Better Auth between groups of tests) and is the
 * reference the migrations were transcribed from. The column mapping matches the knex adapter:
 *
 * | Better Auth type     | PostgreSQL    | SQLite                                   |
 * |----------------------|---------------|------------------------------------------|
 * | id (string / uuid)   | text          | text                                     |
 * | id (serial)          | serial        | integer primary key autoincrement        |
 * | string, enum         | text          | text                                     |
 * | number (bigint)      | integer (bigint) | integer (bigint)                      |
 * | boolean              | boolean       | boolean (0/1)                            |
 * | date                 | timestamptz   | datetime (ISO-8601 text)                 |
 * | json, string[], number[] | jsonb     | text (JSON)                              |
 */

type OnDelete = NonNullable<DBFieldAttribute['references']>['onDelete'];

export interface ColumnPlan {
  name: string;
  kind: 'string' | 'number' | 'bigint' | 'boolean' | 'date' | 'json' | 'foreignId';
  nullable: boolean;
  references?: { table: string; column: string; onDelete: NonNullable<OnDelete> };
}

export interface IndexPlan {
  name: string;
  columns: string[];
  unique: boolean;
}

export interface TablePlan {
  name: string;
  numericId: boolean;
  columns: ColumnPlan[];
  indexes: IndexPlan[];
}

const MAX_IDENTIFIER_BYTES = 63;

/** Better Auth's index naming (`<table>_<columns>_idx|uidx`), shortened with a hash past PostgreSQL's 63-byte limit. */
export function indexName(table: string, columns: string[], unique: boolean): string {
  const suffix = unique ? 'uidx' : 'idx';
  const name = `${table}_${columns.join('_')}_${suffix}`;
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  const tail = `_${hash}_${suffix}`;
  return `${name.slice(0, MAX_IDENTIFIER_BYTES - tail.length)}${tail}`;
}

/** Resolves Better Auth's logical schema for `options` into physical tables, parents first. */
export function planBetterAuthTables(options: BetterAuthOptions): TablePlan[] {
  const schema: BetterAuthDBSchema = getAuthTables(options);
  const numericId = options.advanced?.database?.generateId === 'serial';

  const tableOf = (model: string) => schema[model] ?? Object.values(schema).find((t) => t.modelName === model);
  const columnOf = (model: string, field: string) => {
    if (field === 'id') return 'id';
    const attr = tableOf(model)?.fields[field];
    return attr?.fieldName || field;
  };

  // Several logical models may map to one table (plugins extending a core model): merge them.
  const merged = new Map<string, { fields: Record<string, DBFieldAttribute>; indexes: NonNullable<BetterAuthDBSchema[string]['indexes']>[number][]; order: number }>();
  for (const table of Object.values(schema)) {
    if (table.disableMigrations) continue;
    const entry = merged.get(table.modelName) ?? { fields: {}, indexes: [], order: table.order ?? Infinity };
    Object.assign(entry.fields, table.fields);
    entry.indexes.push(...(table.indexes ?? []));
    entry.order = Math.min(entry.order, table.order ?? Infinity);
    merged.set(table.modelName, entry);
  }

  const plans: (TablePlan & { order: number })[] = [];
  for (const [name, table] of merged) {
    const columns: ColumnPlan[] = [];
    const indexes: IndexPlan[] = [];
    const indexed = new Set<string>();
    for (const [key, field] of Object.entries(table.fields)) {
      const columnName = field.fieldName || key;
      const reference = field.references;
      const column: ColumnPlan = {
        name: columnName,
        kind: columnKind(field),
        nullable: field.required === false,
      };
      if (reference) {
        const target = tableOf(reference.model);
        column.references = {
          table: target?.modelName ?? reference.model,
          column: columnOf(reference.model, reference.field),
          onDelete: reference.onDelete ?? 'cascade',
        };
      }
      columns.push(column);
      if (field.unique) {
        indexes.push({ name: indexName(name, [columnName], true), columns: [columnName], unique: true });
        indexed.add(columnName);
      } else if (field.index || reference) {
        // Foreign keys are indexed too: PostgreSQL does not do it, and cascades and joins need it.
        indexes.push({ name: indexName(name, [columnName], false), columns: [columnName], unique: false });
        indexed.add(columnName);
      }
    }
    for (const index of table.indexes) {
      const cols = index.fields.map((f) => table.fields[f]?.fieldName || f);
      indexes.push({ name: index.name ?? indexName(name, cols, index.unique ?? false), columns: cols, unique: index.unique ?? false });
    }
    plans.push({ name, numericId, columns, indexes, order: table.order });
  }

  // Parents before children, so every foreign key points at an existing table.
  plans.sort((a, b) => a.order - b.order);
  const sorted: TablePlan[] = [];
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const visit = (plan: TablePlan & { order: number }) => {
    if (placed.has(plan.name) || visiting.has(plan.name)) return;
    visiting.add(plan.name);
    for (const column of plan.columns) {
      const parent = column.references && plans.find((p) => p.name === column.references!.table);
      if (parent && parent !== plan) visit(parent);
    }
    visiting.delete(plan.name);
    placed.add(plan.name);
    const { order: _order, ...rest } = plan;
    sorted.push(rest);
  };
  for (const plan of plans) visit(plan);
  return sorted;
}

function columnKind(field: DBFieldAttribute): ColumnPlan['kind'] {
  if (field.references?.field === 'id') return 'foreignId';
  if (Array.isArray(field.type)) return 'string';
  switch (field.type) {
    case 'string':
      return 'string';
    case 'number':
      return field.bigint ? 'bigint' : 'number';
    case 'boolean':
      return 'boolean';
    case 'date':
      return 'date';
    case 'json':
    case 'string[]':
    case 'number[]':
      return 'json';
    default:
      throw new Error(`Unsupported Better Auth field type ${JSON.stringify(field.type)}`);
  }
}

function isPostgres(db: Knex): boolean {
  const client = String(db.client.config.client);
  return client === 'pg' || client === 'postgres' || client === 'postgresql';
}

function addColumn(t: Knex.CreateTableBuilder, column: ColumnPlan, numericId: boolean, pg: boolean) {
  let builder: Knex.ColumnBuilder;
  switch (column.kind) {
    case 'foreignId':
      builder = numericId ? t.integer(column.name) : t.text(column.name);
      break;
    case 'string':
      builder = t.text(column.name);
      break;
    case 'number':
      builder = t.integer(column.name);
      break;
    case 'bigint':
      builder = t.bigInteger(column.name);
      break;
    case 'boolean':
      builder = t.boolean(column.name);
      break;
    case 'date':
      builder = pg ? t.timestamp(column.name, { useTz: true }) : t.dateTime(column.name);
      break;
    case 'json':
      builder = pg ? t.jsonb(column.name) : t.text(column.name);
      break;
  }
  if (column.nullable) builder.nullable();
  else builder.notNullable();
  if (column.references) {
    t.foreign(column.name)
      .references(column.references.column)
      .inTable(column.references.table)
      .onDelete(column.references.onDelete.toUpperCase());
  }
}

/** Creates the tables, indexes and foreign keys Better Auth needs for `options`. */
export async function createBetterAuthTables(db: Knex, options: BetterAuthOptions): Promise<void> {
  const pg = isPostgres(db);
  for (const plan of planBetterAuthTables(options)) {
    await db.schema.createTable(plan.name, (t) => {
      if (plan.numericId) t.increments('id');
      else t.text('id').notNullable().primary();
      for (const column of plan.columns) addColumn(t, column, plan.numericId, pg);
      for (const index of plan.indexes) {
        if (index.unique) t.unique(index.columns, { indexName: index.name });
        else t.index(index.columns, index.name);
      }
    });
  }
}
