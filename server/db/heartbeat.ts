import type { SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { olderThan } from './clock';

/** SQL: the row's heartbeat is older than `staleAfterMs` by the database's clock (server/background/liveness.ts). */
export function heartbeatStale(column: AnyPgColumn, staleAfterMs: number): SQL {
  return olderThan(column, staleAfterMs);
}
