import { getTableColumns, type InferSelectModel } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';

/**
 * A table's row read by a raw statement (`returning *` of a CTE, say), turned into what
 * drizzle's own select would give: each column under its property name, through the
 * column's driver mapping (timestamps to Dates, numbers from strings). Both drivers'
 * raw queries hand timestamps over as text, as drizzle's selects do.
 */
export function rowFromDriver<T extends PgTable>(table: T, raw: Record<string, unknown>): InferSelectModel<T> {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as InferSelectModel<T>;
}
