import { sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/*
 * Times one instance writes and another judges (a lease, a heartbeat, how long a job has
 * waited) are read on the database's clock: instances share one database, not one clock, and
 * an instance whose clock runs ahead would take work another holds, or one running behind
 * would never take work whose holder died. So these are `now()` in SQL, never a Date of the
 * app passed in. A test may name the moment (`at`), read on that same clock.
 */

/** The database's now, or the moment a test names. */
export function databaseNow(at?: Date): SQL {
  return at ? sql`${at.toISOString()}::timestamptz` : sql`now()`;
}

function interval(ms: number): SQL {
  return sql`make_interval(secs => ${ms / 1000})`;
}

/** The end of a lease taken now for `ms`, on the database's clock. */
export function leaseEnd(ms: number): SQL {
  return sql`now() + ${interval(ms)}`;
}

/** The lease in `column` is nobody's: never taken, let go, or run out by the database's clock. */
export function leaseFree(column: AnyPgColumn): SQL {
  return sql`(${column} is null or ${column} < now())`;
}

/** The time in `column` is more than `ms` before the database's now (or `at`). */
export function olderThan(column: AnyPgColumn, ms: number, at?: Date): SQL {
  return sql`${column} < ${databaseNow(at)} - ${interval(ms)}`;
}
