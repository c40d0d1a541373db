import { and, count, desc, eq, lt, sql } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { generationRequests, images } from '../db/schema';
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
 * still PENDING (the reconciler may have given up on it and refunded it meanwhile).
 */
export async function completeRequest(
  db: Executor,
  requestId: number,
  image: Omit<NewImage, 'id' | 'generationRequestId' | 'createdAt' | 'updatedAt'>,
): Promise<ImageRow | undefined> {
  const result = (await db.execute(sql`
    with settled as (
      update ${generationRequests} set status = 'COMPLETED', updated_at = now()
      where id = ${requestId} and status = 'PENDING'
      returning id
    ),
    img as (
      insert into ${images}
        (user_id, generation_request_id, file_name, original_name, prompt, width, height, steps, cfg_scale,
         style_preset, size, file_size, mime_type, seed, model, finish_reason)
      select ${image.userId}, settled.id, ${image.fileName}, ${image.originalName ?? null}, ${image.prompt},
        ${image.width ?? null}, ${image.height ?? null}, ${image.steps ?? null}, ${image.cfgScale ?? null},
        ${image.stylePreset ?? null}, ${image.size}, ${image.fileSize}, ${image.mimeType}, ${image.seed ?? null},
        ${image.model ?? null}, ${image.finishReason ?? null}
      from settled
      returning id
    )
    select id from img
  `)) as { rows: Array<{ id: number }> };
  const id = result.rows[0]?.id;
  if (id === undefined) return undefined;
  // Read back through the schema, so the reply has the stored values and types.
  const rows = await db.select().from(images).where(eq(images.id, id));
  if (!rows[0]) throw new Error(`image ${id} was stored but cannot be read back`);
  return rows[0];
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
