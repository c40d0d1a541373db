import { z } from 'zod';
import { messageSchema } from './conversation';

/**
 * Durable jobs (issue #28): a generation or a portrait is a row from its first moment,
 * run by a worker on any instance, finished whether or not a browser watches. SPEC's
 * request statuses stay PENDING, COMPLETED and FAILED; the queue shows finer states:
 *
 * - queued: charged, waiting for a slot of its provider (PENDING, not yet sent);
 * - running: sent to the provider (PENDING);
 * - completed: the image is stored (COMPLETED);
 * - failed: the provider or the store failed, refunded (FAILED);
 * - cancelled: the user cancelled it, refunded (FAILED).
 *
 * Shared by the server's answers and events and the browser's parsing.
 */
export const JOB_STATES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const JOB_KINDS = ['generation', 'portrait'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** Jobs a user may have queued or running at once, unless JOBS_PER_USER says otherwise. */
export const DEFAULT_JOBS_PER_USER = 4;

/** A finished job stays in the queue panel this long, then only the gallery has it. */
export const FINISHED_JOBS_SHOWN_MS = 24 * 60 * 60_000;

/** At most this many finished jobs are listed, newest first. */
export const FINISHED_JOBS_SHOWN = 20;

export function isActiveJobState(state: JobState): boolean {
  return state === 'queued' || state === 'running';
}

export const jobSchema = z.object({
  id: z.number().int(),
  kind: z.enum(JOB_KINDS),
  /** An image model id (ultra, core, sd3, original) or "portrait". */
  model: z.string(),
  prompt: z.string(),
  state: z.enum(JOB_STATES),
  /** Tokens charged when the job was created (refunded when it failed or was cancelled). */
  cost: z.number().int(),
  /** 1-based place among the jobs waiting for the same provider; null unless queued. */
  position: z.number().int().positive().nullable(),
  /** Estimated seconds until the result; null once finished. */
  etaSeconds: z.number().int().nonnegative().nullable(),
  /** Estimated share of the work done, 0 to 1 (1 once finished). */
  progress: z.number().min(0).max(1),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  /** Why it failed (an error code of src/domain/errors.ts and the server's text); null otherwise. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** The stored picture of a completed job. */
  image: z.object({ id: z.number().int(), url: z.string(), thumbnailUrl: z.string() }).nullable(),
});

export type Job = z.infer<typeof jobSchema>;

/** GET /api/jobs: the user's active jobs, oldest first, then recent finished ones, newest first. */
export const jobListSchema = z.object({
  jobs: z.array(jobSchema),
  /** How many jobs the user may have queued or running at once. */
  perUserLimit: z.number().int().positive(),
});

export type JobList = z.infer<typeof jobListSchema>;

/** POST /api/jobs/:id/cancel. */
export const jobIdParamsSchema = z.object({ id: z.coerce.number().int().positive().max(2_147_483_647) });

/**
 * The event stream (GET /api/events, server-sent events). Each event has an `id:` that
 * grows per user; a reconnect sends the last one seen as `Last-Event-ID` and gets every
 * later event once, in order. `event: job` carries a job as it changes, with the user's
 * balance at that moment (a charge, a refund or a completion moved it).
 */
export const jobEventSchema = z.object({
  job: jobSchema,
  balance: z.number().int().nonnegative(),
});

export type JobEvent = z.infer<typeof jobEventSchema>;

/**
 * The names of the event stream's events. `ready` is the first frame of a connection made
 * without `Last-Event-ID`: its `id:` is the newest event so far (data `{}`), so a reader that
 * loads GET /api/jobs after it and reconnects with that id misses nothing in between.
 */
export const STREAM_EVENTS = { job: 'job', ready: 'ready', reply: 'reply' } as const;

/**
 * `event: reply`: a chat reply as it is written, from whichever tab or instance started it.
 * `content` is the whole text so far (a reader that joins late needs no earlier event); at
 * most a few a second. The last has `done: true` with the stored message (absent when the
 * reply left nothing: stopped or failed before its first word) and the balance after it.
 */
export const replyEventSchema = z.object({
  conversationId: z.number().int(),
  requestId: z.number().int(),
  model: z.string(),
  content: z.string(),
  done: z.boolean(),
  message: messageSchema.optional(),
  balance: z.number().int().nonnegative().optional(),
});

export type ReplyEvent = z.infer<typeof replyEventSchema>;
