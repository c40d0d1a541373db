import { and, count, desc, eq, lt } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { generationRequests, images } from '../db/schema';

export type GenerationRequestRow = typeof generationRequests.$inferSelect;
export type NewGenerationRequest = typeof generationRequests.$inferInsert;
export type ImageRow = typeof images.$inferSelect;
export type NewImage = typeof images.$inferInsert;

export async function insertPendingRequest(db: Executor, row: NewGenerationRequest): Promise<GenerationRequestRow> {
  const rows = await db
    .insert(generationRequests)
    .values({ ...row, status: 'PENDING' })
    .returning();
  const inserted = rows[0];
  if (!inserted) throw new Error('generation request insert returned no row');
  return inserted;
}

/**
 * Moves a request out of PENDING. Conditional on it still being PENDING, so the request
 * path and the reconciler can never both settle it: the loser gets undefined.
 */
export async function settlePendingRequest(
  db: Executor,
  id: number,
  status: 'COMPLETED' | 'FAILED',
  errorMessage: string | null = null,
): Promise<GenerationRequestRow | undefined> {
  const rows = await db
    .update(generationRequests)
    .set({ status, errorMessage, updatedAt: new Date() })
    .where(and(eq(generationRequests.id, id), eq(generationRequests.status, 'PENDING')))
    .returning();
  return rows[0];
}

export async function findStalePending(db: Executor, olderThan: Date, limit: number): Promise<GenerationRequestRow[]> {
  return db
    .select()
    .from(generationRequests)
    .where(and(eq(generationRequests.status, 'PENDING'), lt(generationRequests.createdAt, olderThan)))
    .orderBy(generationRequests.createdAt)
    .limit(limit);
}

export async function findRequest(db: Executor, id: number): Promise<GenerationRequestRow | undefined> {
  const rows = await db.select().from(generationRequests).where(eq(generationRequests.id, id));
  return rows[0];
}

export async function insertImage(db: Executor, row: NewImage): Promise<ImageRow> {
  const rows = await db.insert(images).values(row).returning();
  const inserted = rows[0];
  if (!inserted) throw new Error('image insert returned no row');
  return inserted;
}

/** The user's images, newest first (id breaks ties between equal timestamps). */
export async function listImages(db: Executor, userId: number, limit: number, offset: number): Promise<ImageRow[]> {
  return db
    .select()
    .from(images)
    .where(eq(images.userId, userId))
    .orderBy(desc(images.createdAt), desc(images.id))
    .limit(limit)
    .offset(offset);
}

export async function countImages(db: Executor, userId: number): Promise<number> {
  const rows = await db.select({ total: count() }).from(images).where(eq(images.userId, userId));
  return Number(rows[0]?.total ?? 0);
}
