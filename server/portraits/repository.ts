import { and, eq, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { images } from '../db/schema';

/** One of the user's own images, by id or by file name; undefined for anyone else's. */
export async function findOwnedImage(
  db: Executor,
  userId: number,
  reference: { id: number } | { fileName: string },
): Promise<{ id: number; fileName: string } | undefined> {
  const match: SQL = 'id' in reference ? eq(images.id, reference.id) : eq(images.fileName, reference.fileName);
  const rows = await db
    .select({ id: images.id, fileName: images.fileName })
    .from(images)
    .where(and(eq(images.userId, userId), match));
  return rows[0];
}
