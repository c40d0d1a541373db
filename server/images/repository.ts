import { and, asc, count, desc, eq, gt, ilike, inArray, isNull, sql } from 'drizzle-orm';
import type { Db, Executor } from '../db/client';
import type { generationRequests } from '../db/schema';
import { images, users } from '../db/schema';

export type GenerationRequestRow = typeof generationRequests.$inferSelect;
export type NewGenerationRequest = typeof generationRequests.$inferInsert;
export type ImageRow = typeof images.$inferSelect;
export type NewImage = typeof images.$inferInsert;

/**
 * ILIKE's pattern for "contains this text": the user's % _ and \ match themselves
 * (backslash is ILIKE's default escape character).
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function ownedMatching(userId: number, search: string | undefined) {
  const owned = eq(images.userId, userId);
  return search === undefined ? owned : and(owned, ilike(images.prompt, containsPattern(search)));
}

/**
 * The user's images, newest first (id breaks ties between equal timestamps); with a
 * search, only those whose prompt contains it, case-insensitively.
 */
export async function listImages(
  db: Executor,
  userId: number,
  limit: number,
  offset: number,
  search?: string,
): Promise<ImageRow[]> {
  return db
    .select()
    .from(images)
    .where(ownedMatching(userId, search))
    .orderBy(desc(images.createdAt), desc(images.id))
    .limit(limit)
    .offset(offset);
}

export async function countImages(db: Executor, userId: number, search?: string): Promise<number> {
  const rows = await db.select({ total: count() }).from(images).where(ownedMatching(userId, search));
  return Number(rows[0]?.total ?? 0);
}

/**
 * A page of the user's images, newest first, and how many there are. The total is the
 * count the images triggers keep on the user's row, not a count of 100,000 rows; a page
 * past the middle is read from the oldest end of the index and turned round, so the last
 * page skips as few rows as the first.
 */
export async function imagePage(
  db: Executor,
  userId: number,
  limit: number,
  offset: number,
): Promise<{ rows: ImageRow[]; total: number }> {
  const owner = await db.select({ total: users.imagesCount }).from(users).where(eq(users.id, userId));
  const total = owner[0]?.total ?? 0;
  if (offset >= total) return { rows: [], total };
  if (offset + limit / 2 <= total / 2) return { rows: await listImages(db, userId, limit, offset), total };
  // Newest-first positions [offset, offset + limit) are oldest-first [total - offset - limit, total - offset).
  const end = total - offset;
  const start = Math.max(0, end - limit);
  const oldestFirst = await db
    .select()
    .from(images)
    .where(eq(images.userId, userId))
    .orderBy(asc(images.createdAt), asc(images.id))
    .limit(end - start)
    .offset(start);
  return { rows: oldestFirst.reverse(), total };
}

/**
 * Which of `fileNames` some row refers to. Every column that names a stored file belongs
 * in this list (a thumbnail column joins it), so the sweep never removes a file in use.
 */
const FILE_NAME_COLUMNS = [images.fileName, images.thumbnailFileName] as const;

export async function referencedFileNames(db: Executor, fileNames: readonly string[]): Promise<Set<string>> {
  if (fileNames.length === 0) return new Set();
  const found = new Set<string>();
  for (const column of FILE_NAME_COLUMNS) {
    const rows = await db
      .select({ name: column })
      .from(images)
      .where(inArray(column, [...fileNames]));
    for (const row of rows) if (row.name) found.add(row.name);
  }
  return found;
}

/**
 * A search page in one transaction that lets the planner use the trigram index: GIN is
 * read only through bitmap scans, which the embedded database turns off by default
 * (server/db/client.ts). On PostgreSQL they are on already; SET LOCAL ends with the
 * transaction either way.
 */
export async function searchImages(
  db: Db,
  userId: number,
  limit: number,
  offset: number,
  search: string,
): Promise<{ rows: ImageRow[]; total: number }> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local enable_bitmapscan = on`);
    const rows = await listImages(tx, userId, limit, offset, search);
    // A page that is not full ends the list: no second pass over the matches.
    const total = rows.length > 0 && rows.length < limit ? offset + rows.length : await countImages(tx, userId, search);
    return { rows, total };
  });
}

/** Images whose list thumbnail is still missing (stored before thumbnails existed, or never made). */
export async function imagesWithoutThumbnail(db: Executor, afterId: number, limit: number): Promise<ImageRow[]> {
  return db
    .select()
    .from(images)
    .where(and(isNull(images.thumbnailFileName), gt(images.id, afterId)))
    .orderBy(images.id)
    .limit(limit);
}

/** Sets the thumbnail only where none is set, so two jobs cannot both keep theirs. */
export async function setThumbnail(db: Executor, id: number, thumbnailFileName: string): Promise<boolean> {
  const rows = await db
    .update(images)
    .set({ thumbnailFileName })
    .where(and(eq(images.id, id), isNull(images.thumbnailFileName)))
    .returning({ id: images.id });
  return rows.length > 0;
}

/** Deletes the user's image row; undefined when the user has no image with this id. */
export async function deleteImage(
  db: Executor,
  userId: number,
  id: number,
): Promise<Pick<ImageRow, 'fileName' | 'thumbnailFileName'> | undefined> {
  const rows = await db
    .delete(images)
    .where(and(eq(images.id, id), eq(images.userId, userId)))
    .returning({ fileName: images.fileName, thumbnailFileName: images.thumbnailFileName });
  return rows[0];
}
