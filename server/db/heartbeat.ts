import { sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/** SQL: the row's heartbeat is older than `staleAfterMs` by the database's clock (server/background/liveness.ts). */
export function heartbeatStale(column: AnyPgColumn, staleAfterMs: number): SQL {
  return sql`${column} < now() - make_interval(secs => ${staleAfterMs / 1000})`;
}
