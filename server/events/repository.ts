import { and, asc, eq, gt, lt, max, sql } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { userEvents } from '../db/schema';

export type UserEventRow = typeof userEvents.$inferSelect;

export async function appendEvent(db: Executor, userId: number, type: string, data: unknown): Promise<number> {
  const rows = await db.insert(userEvents).values({ userId, type, data }).returning({ id: userEvents.id });
  const id = rows[0]?.id;
  if (id === undefined) throw new Error('the event was not stored');
  return id;
}

/** The user's events after `afterId`, oldest first. */
export async function eventsAfter(
  db: Executor,
  userId: number,
  afterId: number,
  limit: number,
): Promise<UserEventRow[]> {
  return db
    .select()
    .from(userEvents)
    .where(and(eq(userEvents.userId, userId), gt(userEvents.id, afterId)))
    .orderBy(asc(userEvents.id))
    .limit(limit);
}

/** The id of the user's newest event, 0 with none. */
export async function latestEventId(db: Executor, userId: number): Promise<number> {
  const rows = await db
    .select({ id: max(userEvents.id) })
    .from(userEvents)
    .where(eq(userEvents.userId, userId));
  return Number(rows[0]?.id ?? 0);
}

export async function deleteEventsBefore(db: Executor, before: Date): Promise<number> {
  const rows = await db.delete(userEvents).where(lt(userEvents.createdAt, before)).returning({ id: userEvents.id });
  return rows.length;
}

/** PostgreSQL's NOTIFY, through the application's pool (server/events/bus.ts listens). */
export async function notify(db: Executor, channel: string, message: string): Promise<void> {
  await db.execute(sql`select pg_notify(${channel}, ${message})`);
}
