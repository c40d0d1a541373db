import { and, asc, desc, eq, gt, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { rowFromDriver } from '../db/rows';
import { generationRequests, images, users } from '../db/schema';
import { olderThan } from '../db/clock';
import { heartbeatStale } from '../db/heartbeat';
import { balanceOf, balanceUpdateSql, ledgerRowSql } from '../ledger/repository';
import type { ImageRow, NewImage } from '../images/repository';

export type JobRow = typeof generationRequests.$inferSelect;
export type NewJob = typeof generationRequests.$inferInsert;
export type Lane = JobRow['lane'];

export type OpenedJob = Pick<JobRow, 'id' | 'userId' | 'cost'>;

export type OpenOutcome =
  | { kind: 'opened'; job: OpenedJob }
  /** The balance did not cover the cost when the statement ran: nothing was written. */
  | { kind: 'refused'; reason: 'balance'; balance: number }
  /** The user had `limit` jobs PENDING already: nothing was written. */
  | { kind: 'refused'; reason: 'limit'; balance: number };

export type NewJobRow = Omit<
  NewJob,
  | 'id'
  | 'status'
  | 'errorMessage'
  | 'errorCode'
  | 'errorDetails'
  | 'createdAt'
  | 'updatedAt'
  | 'startedAt'
  | 'claimedBy'
  | 'finishedAt'
  | 'heartbeatAt'
  | 'cancelRequested'
>;

/**
 * The charge, the PENDING job and its ledger row in one atomic statement. The balance and
 * the per-user limit (users.active_jobs, kept by triggers on generation_requests: migration
 * 0009) are both checked on the user's locked row, so no number of requests or instances
 * can pass either together; every write reads from the conditional charge, so a refusal
 * writes nothing.
 */
export async function openJob(db: Executor, row: NewJobRow, perUserLimit: number): Promise<OpenOutcome> {
  const result = (await db.execute(sql`
    with charged as (${balanceUpdateSql(row.userId, -row.cost, sql`${users.activeJobs} < ${perUserLimit}`)}),
    req as (
      insert into ${generationRequests}
        (user_id, model, prompt, negative_prompt, width, height, steps, cfg_scale, style_preset, samples, cost,
         kind, lane, input, photo)
      select ${row.userId}, ${row.model}, ${row.prompt}, ${row.negativePrompt ?? null}, ${row.width}, ${row.height},
        ${row.steps}, ${row.cfgScale ?? null}, ${row.stylePreset ?? null}, ${row.samples ?? 1}, ${row.cost},
        ${row.kind ?? 'generation'}, ${row.lane ?? 'images'},
        ${row.input === undefined || row.input === null ? null : JSON.stringify(row.input)}::jsonb,
        ${row.photo ?? null}::bytea
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
    const [owner] = await db
      .select({ balance: users.tokensAmount, active: users.activeJobs })
      .from(users)
      .where(eq(users.id, row.userId));
    const balance = owner?.balance ?? (await balanceOf(db, row.userId)) ?? 0;
    // SPEC's balance rule first: a short balance is refused as such, whatever the limit.
    if (balance < row.cost || !owner) return { kind: 'refused', reason: 'balance', balance };
    return { kind: 'refused', reason: 'limit', balance };
  }
  if (opened.balance_after === null) throw new Error('the charge statement wrote only part of its rows');
  return { kind: 'opened', job: { id: opened.request_id, userId: row.userId, cost: row.cost } };
}

/**
 * Takes the oldest job waiting in line whose lane has a free slot, for `instanceId`.
 * Claims are taken one at a time across every instance (a transaction-scoped advisory
 * lock), so two instances never both fill a lane's last slot; SKIP LOCKED is not enough
 * for that, since the count of running jobs is read, not locked.
 */
export async function claimNext(
  db: { transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T> },
  instanceId: string,
  slots: Record<Lane, number>,
): Promise<JobRow | undefined> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${JOB_CLAIM_LOCK})`);
    const result = (await tx.execute(sql`
      with running as (
        select lane, count(*)::int as n from ${generationRequests}
        where status = 'PENDING' and started_at is not null
        group by lane
      ),
      next as (
        select g.id from ${generationRequests} g
        where g.status = 'PENDING' and g.started_at is null
          and coalesce((select n from running where running.lane = g.lane), 0) <
            (case g.lane when 'portraits' then ${slots.portraits}::int else ${slots.images}::int end)
        order by g.created_at, g.id
        limit 1
        for update skip locked
      )
      update ${generationRequests} set started_at = now(), heartbeat_at = now(), claimed_by = ${instanceId},
        updated_at = now()
      where id = (select id from next)
      returning *
    `)) as { rows: Array<Record<string, unknown>> };
    const row = result.rows[0];
    return row ? rowFromDriver(generationRequests, row) : undefined;
  });
}

/** An arbitrary constant that names the claim lock among the database's advisory locks. */
export const JOB_CLAIM_LOCK = 280_001;

/**
 * The image row and COMPLETED in one atomic statement, the image only if the job was
 * still PENDING (a cancel or the reconciler may have settled it meanwhile). The same
 * statement reads the stored row back and the owner's balance.
 */
export async function completeJob(
  db: Executor,
  jobId: number,
  image: Omit<NewImage, 'id' | 'generationRequestId' | 'createdAt' | 'updatedAt'>,
): Promise<{ image: ImageRow; balance: number } | undefined> {
  const result = (await db.execute(sql`
    with settled as (
      update ${generationRequests} set status = 'COMPLETED', updated_at = now()
      where id = ${jobId} and status = 'PENDING'
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

export interface Settlement {
  code: string;
  message: string;
  details?: Record<string, unknown> | null;
}

/**
 * Moves a job out of PENDING as FAILED. Conditional on it still being PENDING, so the
 * worker, a cancel and the reconciler can never both settle it: the loser gets undefined.
 */
export async function failJob(
  db: Executor,
  id: number,
  failure: Settlement,
  only: {
    /** Only when its heartbeat stopped this long ago (the reconciler): live work is left alone. */
    staleAfterMs?: number;
    /** Only while it waits in line (a cancel before any worker took it). */
    queued?: boolean;
    /**
     * Only while it waits in line and has waited longer than `ms` (the queue's deadline), by
     * the database's clock or at the moment `at` on it (tests).
     */
    waitedLongerThan?: { ms: number; at?: Date };
  } = {},
): Promise<JobRow | undefined> {
  const rows = await db
    .update(generationRequests)
    .set({
      status: 'FAILED',
      errorMessage: failure.message,
      errorCode: failure.code,
      errorDetails: failure.details ?? null,
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(generationRequests.id, id),
        eq(generationRequests.status, 'PENDING'),
        only.staleAfterMs === undefined
          ? undefined
          : and(
              isNotNull(generationRequests.startedAt),
              heartbeatStale(generationRequests.heartbeatAt, only.staleAfterMs),
            ),
        only.queued || only.waitedLongerThan ? isNull(generationRequests.startedAt) : undefined,
        only.waitedLongerThan
          ? olderThan(generationRequests.createdAt, only.waitedLongerThan.ms, only.waitedLongerThan.at)
          : undefined,
      ),
    )
    .returning();
  return rows[0];
}

/** Asks the worker of a running job to stop it; false when it is no longer PENDING. */
export async function requestCancel(db: Executor, userId: number, id: number): Promise<boolean> {
  const rows = await db
    .update(generationRequests)
    .set({ cancelRequested: true })
    .where(
      and(
        eq(generationRequests.id, id),
        eq(generationRequests.userId, userId),
        eq(generationRequests.status, 'PENDING'),
      ),
    )
    .returning({ id: generationRequests.id });
  return rows.length > 0;
}

/**
 * A job claimed by an instance that is stopping goes back in line, for any instance to take
 * (only while it is still PENDING and that instance's: nothing ran it yet).
 */
export async function unclaimJob(db: Executor, id: number, instanceId: string): Promise<void> {
  await db
    .update(generationRequests)
    .set({ startedAt: null, claimedBy: null, updatedAt: sql`now()` })
    .where(
      and(
        eq(generationRequests.id, id),
        eq(generationRequests.status, 'PENDING'),
        eq(generationRequests.claimedBy, instanceId),
      ),
    );
}

/** A live job shows it is alive (server/background/liveness.ts); answers whether its cancel was asked for. */
export async function beatJob(db: Executor, id: number): Promise<{ cancelRequested: boolean } | undefined> {
  const rows = await db
    .update(generationRequests)
    .set({ heartbeatAt: sql`now()` })
    .where(and(eq(generationRequests.id, id), eq(generationRequests.status, 'PENDING')))
    .returning({ cancelRequested: generationRequests.cancelRequested });
  return rows[0];
}

/** Unfinished jobs that meet `condition`, oldest first. */
function pendingJobs(db: Executor, condition: SQL | undefined, limit: number): Promise<JobRow[]> {
  return db
    .select()
    .from(generationRequests)
    .where(and(eq(generationRequests.status, 'PENDING'), condition))
    .orderBy(generationRequests.createdAt)
    .limit(limit);
}

/** Running jobs whose heartbeat stopped `staleAfterMs` ago or more, by the database's clock. */
export function findStaleRunning(db: Executor, staleAfterMs: number, limit: number): Promise<JobRow[]> {
  const stale = and(
    isNotNull(generationRequests.startedAt),
    heartbeatStale(generationRequests.heartbeatAt, staleAfterMs),
  );
  return pendingJobs(db, stale, limit);
}

/**
 * Jobs that have waited in line longer than `waitedMs` (the queue's deadline passed), by the
 * database's clock (the clock their creation was stamped with), or at the moment `at` on it.
 */
export function findExpiredQueued(db: Executor, waitedMs: number, limit: number, at?: Date): Promise<JobRow[]> {
  return pendingJobs(
    db,
    and(isNull(generationRequests.startedAt), olderThan(generationRequests.createdAt, waitedMs, at)),
    limit,
  );
}

export async function findJob(db: Executor, id: number): Promise<JobRow | undefined> {
  const rows = await db.select().from(generationRequests).where(eq(generationRequests.id, id));
  return rows[0];
}

export async function findOwnedJob(db: Executor, userId: number, id: number): Promise<JobRow | undefined> {
  const rows = await db
    .select()
    .from(generationRequests)
    .where(and(eq(generationRequests.id, id), eq(generationRequests.userId, userId)));
  return rows[0];
}

/** The image a completed job stored (null once the user deleted it). */
export async function imageOfJob(db: Executor, jobId: number): Promise<ImageRow | undefined> {
  const rows = await db.select().from(images).where(eq(images.generationRequestId, jobId));
  return rows[0];
}

/** The user's PENDING jobs oldest first, then those finished since `since`, newest first (at most `finished`). */
export async function userJobs(
  db: Executor,
  userId: number,
  since: Date,
  finished: number,
): Promise<Array<{ job: JobRow; image: ImageRow | null }>> {
  const select = () =>
    db
      .select({ job: generationRequests, image: images })
      .from(generationRequests)
      .leftJoin(images, eq(images.generationRequestId, generationRequests.id));
  const active = await select()
    .where(and(eq(generationRequests.userId, userId), eq(generationRequests.status, 'PENDING')))
    .orderBy(asc(generationRequests.createdAt), asc(generationRequests.id));
  const done = await select()
    .where(
      and(
        eq(generationRequests.userId, userId),
        or(eq(generationRequests.status, 'COMPLETED'), eq(generationRequests.status, 'FAILED')),
        gt(generationRequests.finishedAt, since),
      ),
    )
    .orderBy(desc(generationRequests.finishedAt), desc(generationRequests.id))
    .limit(finished);
  return [...active, ...done];
}

/** How many jobs of `lane` wait in line ahead of the one created at (`createdAt`, `id`). */
export async function placeInLine(db: Executor, lane: Lane, createdAt: Date, id: number): Promise<number> {
  const result = (await db.execute(sql`
    select count(*)::int as ahead from ${generationRequests}
    where status = 'PENDING' and started_at is null and lane = ${lane}
      and (created_at, id) < (${createdAt.toISOString()}::timestamptz, ${id})
  `)) as { rows: Array<{ ahead: number }> };
  return Number(result.rows[0]?.ahead ?? 0) + 1;
}

/** The lanes a job can wait in (generation_requests.lane). */
export const LANES: readonly Lane[] = generationRequests.lane.enumValues;

/**
 * Every lane's line now: jobs waiting, jobs running (on any instance), and how long the
 * oldest waiting one has waited, in seconds by the database's clock (0 with none).
 */
export async function lanesNow(
  db: Executor,
): Promise<Array<{ lane: Lane; queued: number; running: number; oldestWaitSeconds: number }>> {
  const result = (await db.execute(sql`
    select lane,
      count(*) filter (where started_at is null)::int as queued,
      count(*) filter (where started_at is not null)::int as running,
      extract(epoch from now() - min(created_at) filter (where started_at is null))::float8 as oldest_wait
    from ${generationRequests}
    where status = 'PENDING'
    group by lane
  `)) as { rows: Array<{ lane: Lane; queued: number; running: number; oldest_wait: number | null }> };
  return LANES.map((lane) => {
    const row = result.rows.find((r) => r.lane === lane);
    return {
      lane,
      queued: Number(row?.queued ?? 0),
      running: Number(row?.running ?? 0),
      oldestWaitSeconds: Math.max(0, Number(row?.oldest_wait ?? 0)),
    };
  });
}

/** The mean run time (start to finish, ms) of the lane's last `recent` completed jobs; null with none. */
export async function meanRunMs(db: Executor, lane: Lane, recent: number): Promise<number | null> {
  const result = (await db.execute(sql`
    select avg(extract(epoch from (finished_at - started_at)) * 1000)::float8 as mean from (
      select started_at, finished_at from ${generationRequests}
      where lane = ${lane} and status = 'COMPLETED' and started_at is not null and finished_at is not null
      order by finished_at desc limit ${recent}
    ) recent
  `)) as { rows: Array<{ mean: number | null }> };
  const mean = result.rows[0]?.mean;
  return mean === null || mean === undefined ? null : Number(mean);
}

/** The user's balance now. */
export async function balanceNow(db: Executor, userId: number): Promise<number> {
  return (await balanceOf(db, userId)) ?? 0;
}
