import { and, asc, count, desc, eq, gt, ilike, inArray, isNull, sql } from 'drizzle-orm';
import type { Db, Executor } from '../db/client';
import { rowFromDriver } from '../db/rows';
import { generationRequests, images, users } from '../db/schema';
import { heartbeatStale } from '../db/heartbeat';
import { balanceOf, balanceUpdateSql, ledgerRowSql } from '../ledger/repository';

export type GenerationRequestRow = typeof generationRequests.$inferSelect;
export type NewGenerationRequest = typeof generationRequests.$inferInsert;
export type ImageRow = typeof images.$inferSelect;
export type NewImage = typeof images.$inferInsert;

export type OpenedRequest = Pick<GenerationRequestRow, 'id' | 'userId' | 'cost'>;

export type OpenOutcome =
  | { kind: 'opened'; request: OpenedRequest }
  /** The balance did not cover the cost when the statement ran: nothing was written. */
  | { kind: 'refused'; balance: number };

/**
 * The charge, the PENDING request and its ledger row in one atomic statement; every
 * write reads from the conditional charge, so a refusal writes nothing.
 */
export async function openRequest(
  db: Executor,
  row: Omit<NewGenerationRequest, 'id' | 'status' | 'errorMessage' | 'createdAt' | 'updatedAt'>,
): Promise<OpenOutcome> {
  const result = (await db.execute(sql`
    with charged as (${balanceUpdateSql(row.userId, -row.cost)}),
    req as (
      insert into ${generationRequests}
        (user_id, model, prompt, negative_prompt, width, height, steps, cfg_scale, style_preset, samples, cost)
      select ${row.userId}, ${row.model}, ${row.prompt}, ${row.negativePrompt ?? null}, ${row.width}, ${row.height},
        ${row.steps}, ${row.cfgScale ?? null}, ${row.stylePreset ?? null}, ${row.samples ?? 1}, ${row.cost}
      from charged
      returning id
    ),
    ledger as (${ledgerRowSql(
      {
        userId: row.userId,
        delta: -row.cost,
        reason: 'generation_charge',
        reference: sql`'generation_request:' || req.id`,
        idempotencyKey: sql`'generation:' || req.id || ':charge'`,
      },
      'charged',
      { from: ['req'] },
    )})
    select (select id from req) as request_id, (select balance_after from ledger) as balance_after
  `)) as { rows: Array<{ request_id: number | null; balance_after: number | null }> };
  const opened = result.rows[0];
  if (!opened || opened.request_id === null) {
    // Read afresh: the statement's own snapshot can predate the charge that beat this one.
    return { kind: 'refused', balance: (await balanceOf(db, row.userId)) ?? 0 };
  }
  if (opened.balance_after === null) throw new Error('the charge statement wrote only part of its rows');
  return { kind: 'opened', request: { id: opened.request_id, userId: row.userId, cost: row.cost } };
}

/**
 * The image row and COMPLETED in one atomic statement, the image only if the request was
 * still PENDING (the reconciler may have given up on it and refunded it meanwhile). The
 * same statement reads the stored row back and the owner's balance, for the reply.
 */
export async function completeRequest(
  db: Executor,
  requestId: number,
  image: Omit<NewImage, 'id' | 'generationRequestId' | 'createdAt' | 'updatedAt'>,
): Promise<{ image: ImageRow; balance: number } | undefined> {
  const result = (await db.execute(sql`
    with settled as (
      update ${generationRequests} set status = 'COMPLETED', updated_at = now()
      where id = ${requestId} and status = 'PENDING'
      returning id
    ),
    img as (
      insert into ${images}
        (user_id, generation_request_id, file_name, original_name, prompt, width, height, steps, cfg_scale,
         style_preset, size, file_size, mime_type, seed, model, finish_reason, negative_prompt, aspect_ratio,
         model_variant, thumbnail_file_name)
      select ${image.userId}, settled.id, ${image.fileName}, ${image.originalName ?? null}, ${image.prompt},
        ${image.width ?? null}, ${image.height ?? null}, ${image.steps ?? null}, ${image.cfgScale ?? null},
        ${image.stylePreset ?? null}, ${image.size}, ${image.fileSize}, ${image.mimeType}, ${image.seed ?? null},
        ${image.model ?? null}, ${image.finishReason ?? null}, ${image.negativePrompt ?? null},
        ${image.aspectRatio ?? null}, ${image.modelVariant ?? null}, ${image.thumbnailFileName ?? null}
      from settled
      returning *
    )
    select img.*, ${users.tokensAmount} as owner_balance from img join ${users} on ${users.id} = img.user_id
  `)) as { rows: Array<Record<string, unknown> & { owner_balance: number }> };
  const row = result.rows[0];
  if (!row) return undefined;
  return { image: rowFromDriver(images, row), balance: Number(row.owner_balance) };
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
  /** Only when its heartbeat stopped this long ago (the reconciler): live work is left alone. */
  onlyIfStaleMs?: number,
): Promise<GenerationRequestRow | undefined> {
  const rows = await db
    .update(generationRequests)
    .set({ status, errorMessage, updatedAt: new Date() })
    .where(
      and(
        eq(generationRequests.id, id),
        eq(generationRequests.status, 'PENDING'),
        onlyIfStaleMs === undefined ? undefined : heartbeatStale(generationRequests.heartbeatAt, onlyIfStaleMs),
      ),
    )
    .returning();
  return rows[0];
}

/** A live request shows it is alive (server/jobs/liveness.ts). */
export async function beatRequest(db: Executor, id: number): Promise<void> {
  await db
    .update(generationRequests)
    .set({ heartbeatAt: sql`now()` })
    .where(and(eq(generationRequests.id, id), eq(generationRequests.status, 'PENDING')));
}

/** PENDING requests whose heartbeat stopped `staleAfterMs` ago or more, by the database's clock. */
export async function findStalePending(
  db: Executor,
  staleAfterMs: number,
  limit: number,
): Promise<GenerationRequestRow[]> {
  return db
    .select()
    .from(generationRequests)
    .where(and(eq(generationRequests.status, 'PENDING'), heartbeatStale(generationRequests.heartbeatAt, staleAfterMs)))
    .orderBy(generationRequests.createdAt)
    .limit(limit);
}

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
