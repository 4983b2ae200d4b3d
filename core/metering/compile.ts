import type { Dialect } from '../db/database.js';
import { isClause, isEventField, type Aggregation, type Filter, type FilterClause, type FilterOperator } from './schema.js';

/**
 * The one place meter filters and aggregations become SQL, for SQLite and PostgreSQL alike. The two dialects
 * must give the same answers (core/metering/compile.test.ts runs every operator and aggregation on both):
 *
 * - An event field (`name`, `source`, …) compares as text; a non-string value never matches it (Polar).
 * - A metadata key compares by the JSON type of the stored value: a string as text (a boolean filter value
 *   reads `t`/`f`, a number its digits, as Polar's does), a number numerically (only against a number), a
 *   boolean against a boolean; a missing key never matches, not even `ne`. Text orders by bytes.
 * - `like` / `not_like` test "contains", case-sensitively, with `%` and `_` in the value as wildcards:
 *   LIKE without escape character on PostgreSQL, the equivalent GLOB on SQLite (whose LIKE ignores case).
 * - Numeric aggregations read only numeric metadata values; an empty set sums (and counts) to 0.
 */
export interface Sql {
  sql: string;
  bindings: (string | number | boolean)[];
}

const COMPARATORS: Record<Exclude<FilterOperator, 'like' | 'not_like'>, string> = { eq: '=', ne: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** `%…%` → GLOB `*…*`: `*`, `?`, `[` literal, `%` → `*`, `_` → `?`. */
const globContaining = (value: string) => `*${value.replace(/[*?[]/g, (c) => `[${c}]`).replace(/%/g, '*').replace(/_/g, '?')}*`;

class Compiler {
  readonly bindings: (string | number | boolean)[] = [];
  constructor(
    private readonly dialect: Dialect,
    private readonly alias: string,
  ) {}

  private bind(value: string | number | boolean): string {
    this.bindings.push(value);
    return '?';
  }

  private get pg() {
    return this.dialect === 'postgres';
  }

  private get falseSql() {
    return this.pg ? 'false' : '0';
  }

  private jsonPath(key: string) {
    return `$."${key}"`;
  }

  /** The JSON type of a metadata value, spelled the same on both dialects: string, number, boolean, or null. */
  private metadataType(key: string): string {
    const column = `${this.alias}.metadata`;
    if (this.pg) return `jsonb_typeof(${column} -> ${this.bind(key)}::text)`;
    return `(case json_type(${column}, ${this.bind(this.jsonPath(key))}) when 'text' then 'string' when 'integer' then 'number' when 'real' then 'number' when 'true' then 'boolean' when 'false' then 'boolean' end)`;
  }

  /** A metadata value as text, as PostgreSQL's `->>` writes it (booleans `true`/`false`). */
  metadataText(key: string): string {
    const column = `${this.alias}.metadata`;
    if (this.pg) return `(${column} ->> ${this.bind(key)}::text)`;
    const path = this.jsonPath(key);
    return `(case json_type(${column}, ${this.bind(path)}) when 'true' then 'true' when 'false' then 'false' else cast(json_extract(${column}, ${this.bind(path)}) as text) end)`;
  }

  private metadataNumber(key: string): string {
    const column = `${this.alias}.metadata`;
    if (this.pg) return `(${column} ->> ${this.bind(key)}::text)::double precision`;
    return `json_extract(${column}, ${this.bind(this.jsonPath(key))})`;
  }

  private metadataBoolean(key: string): string {
    const column = `${this.alias}.metadata`;
    if (this.pg) return `(${column} ->> ${this.bind(key)}::text)::boolean`;
    return `json_extract(${column}, ${this.bind(this.jsonPath(key))})`;
  }

  /** A numeric metadata value, NULL when the value is missing or not a number. */
  metadataNumeric(key: string): string {
    return `(case when ${this.metadataType(key)} = 'number' then ${this.metadataNumber(key)} end)`;
  }

  private compare(expression: string, operator: FilterOperator, value: string | number | boolean): string {
    if (operator === 'like' || operator === 'not_like') {
      const text = String(value);
      const match = this.pg ? `${expression} like ${this.bind(`%${text}%`)} escape ''` : `${expression} glob ${this.bind(globContaining(text))}`;
      return operator === 'like' ? `(${match})` : `(not (${match}))`;
    }
    const bound = typeof value === 'boolean' ? (this.pg ? (value ? 'true' : 'false') : value ? '1' : '0') : this.bind(value);
    // Text orders by bytes on both (SQLite's BINARY); PostgreSQL's default collation would order by locale.
    const ordered = this.pg && typeof value === 'string' && operator !== 'eq' && operator !== 'ne' ? `${expression} collate "C"` : expression;
    return `(${ordered} ${COMPARATORS[operator]} ${bound})`;
  }

  clause(clause: FilterClause): string {
    const { property, operator, value } = clause;
    if (isEventField(property)) {
      return typeof value === 'string' ? this.compare(`${this.alias}.${property}`, operator, value) : this.falseSql;
    }
    const asText = typeof value === 'boolean' ? (value ? 't' : 'f') : String(value);
    if (operator === 'like' || operator === 'not_like') {
      return this.compare(this.metadataText(property), operator, asText);
    }
    // Each branch is built only when it can match, and binds in the order the SQL reads.
    const type = this.metadataType(property);
    const stringBranch = this.compare(this.metadataText(property), operator, asText);
    const numberBranch = typeof value === 'number' ? this.compare(this.metadataNumber(property), operator, value) : this.falseSql;
    const booleanBranch = typeof value === 'boolean' ? this.compare(this.metadataBoolean(property), operator, value) : this.falseSql;
    return `(case ${type} when 'string' then ${stringBranch} when 'number' then ${numberBranch} when 'boolean' then ${booleanBranch} else ${this.falseSql} end)`;
  }

  filter(filter: Filter): string {
    if (filter.clauses.length === 0) return this.pg ? 'true' : '1';
    const parts = filter.clauses.map((item) => (isClause(item) ? this.clause(item) : this.filter(item)));
    return `(${parts.join(filter.conjunction === 'and' ? ' and ' : ' or ')})`;
  }

  aggregation(aggregation: Aggregation): string {
    switch (aggregation.func) {
      case 'count':
        return `count(${this.alias}.timestamp_ms)`;
      case 'unique': {
        const value = isEventField(aggregation.property) ? `${this.alias}.${aggregation.property}` : this.metadataText(aggregation.property);
        return `count(distinct ${value})`;
      }
      case 'sum':
        return `coalesce(sum(${this.metadataNumeric(aggregation.property)}), 0)`;
      default:
        return `${aggregation.func}(${this.metadataNumeric(aggregation.property)})`;
    }
  }
}

/**
 * A meter's filter as a SQL condition over the events table aliased `alias`. Its `missing` metadata keys make a
 * clause NULL, which a WHERE treats as false; NOT of NULL stays NULL, so `not_like` never matches a missing key.
 */
export function compileFilter(dialect: Dialect, filter: Filter, alias = 'e'): Sql {
  const compiler = new Compiler(dialect, alias);
  const sql = compiler.filter(filter);
  return { sql, bindings: compiler.bindings };
}

/** A meter's aggregation as one SQL aggregate expression over the events aliased `alias` (NULL when no event for max/min/avg). */
export function compileAggregation(dialect: Dialect, aggregation: Aggregation, alias = 'e'): Sql {
  const compiler = new Compiler(dialect, alias);
  const sql = compiler.aggregation(aggregation);
  return { sql, bindings: compiler.bindings };
}

/** A numeric metadata value of the events aliased `alias` (NULL when missing or not a number), as the numeric aggregations read it. */
export function compileNumericValue(dialect: Dialect, property: string, alias = 'e'): Sql {
  const compiler = new Compiler(dialect, alias);
  const sql = compiler.metadataNumeric(property);
  return { sql, bindings: compiler.bindings };
}

/** Reads an aggregate as a number (pg answers numeric and bigint as strings); NULL (no events) is 0. */
export const toQuantity = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/**
 * `metadata[key]=value` query filters as a SQL condition: the value read as text must be one of those given, for
 * every key (the same reading as the list endpoints' filters).
 */
export function compileMetadataFilters(dialect: Dialect, filters: Record<string, string[]>, alias = 'e'): Sql {
  const compiler = new Compiler(dialect, alias);
  const parts = Object.entries(filters).map(([key, values]) => {
    const text = compiler.metadataText(key);
    return `${text} in (${values.map((value) => { compiler.bindings.push(value); return '?'; }).join(', ')})`;
  });
  return { sql: parts.length ? parts.join(' and ') : dialect === 'postgres' ? 'true' : '1', bindings: compiler.bindings };
}
