// One file: the runner on its own: its cases share one harness of real database, ledger, event log
// and store.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { STREAM_EVENTS, type Job } from '../../../src/domain/jobs';
import { upsertUser } from '../../../server/auth/repository';
import type { Database, Db, Executor } from '../../../server/db/client';
import { generationRequests, images, tokenLedger, userEvents } from '../../../server/db/schema';
import { AppError, isAppError } from '../../../server/errors';
import { localBus, type Bus } from '../../../server/events/bus';
import { EventLog } from '../../../server/events/service';
import { LocalImageStorage } from '../../../server/images/storage';
import { Thumbnails } from '../../../server/images/thumbnails';
import { LedgerService } from '../../../server/ledger/service';
import type { PaidJobOutput } from '../../../server/jobs/paid-job';
import { JobQueue, type JobHandler, type JobQueueOptions, type Submission } from '../../../server/jobs/queue';
import * as repo from '../../../server/jobs/repository';
import { createOfflineImageProvider } from '../../../server/providers/images/offline';
import { until } from '../chat/helpers';
import { pglite } from '../helpers';

/**
 * The job runner (server/jobs/queue.ts) on its own, with its real database, ledger, event
 * log and file store, and a handler whose provider call the test answers: the rules of
 * docs/architecture.md ("Durable jobs") and issue #28, each in milliseconds. The HTTP
 * suites beside it (queue, wakeups, accounting) drive the same rules through the routes;
 * these reach what a route cannot time or see (a claim on its way, the shutdown's own
 * grace, the row a failure leaves, the numbers of the list at a given moment).
 */

const APP_URL = 'https://app.example';
const COST = 2;
/** Long enough that nothing in these tests can be found by the poll: a wake-up must do it. */
const NO_POLL_MS = 60 * 60_000;

/** A picture as a provider hands it back (the offline engine's PNG), made once. */
let made: Promise<PaidJobOutput> | undefined;
function picture(): Promise<PaidJobOutput> {
  made ??= createOfflineImageProvider()
    .generate({ model: 'core', prompt: 'runner', aspectRatio: '1:1', outputFormat: 'png' })
    .then(({ bytes, mimeType }) => ({ bytes, mimeType }));
  return made;
}

/** One provider call in flight, answered by the test. */
interface Call {
  job: repo.JobRow;
  signal: AbortSignal;
  answer(output: PaidJobOutput): void;
  fail(error: unknown): void;
}

/** A provider failure as a handler receives it. */
class ProviderRefusal extends Error {}

/** Every call a test left unanswered is failed after it, so that no runner waits on it. */
const unanswered: Call[] = [];

/** A handler whose calls wait for the test; aborting a call rejects it, as the real adapters do. */
function heldHandler(lane: repo.Lane = 'images', overrides: Partial<JobHandler> = {}) {
  const calls: Call[] = [];
  const handler: JobHandler = {
    lane,
    work: (job, signal) =>
      new Promise<PaidJobOutput>((resolve, reject) => {
        const call: Call = { job, signal, answer: resolve, fail: reject };
        calls.push(call);
        unanswered.push(call);
        signal.addEventListener('abort', () => reject(new Error('aborted by the signal')), { once: true });
      }),
    failure: (error) =>
      isAppError(error)
        ? error
        : error instanceof ProviderRefusal
          ? new AppError('PROVIDER_ERROR', `refused: ${error.message}`, { details: { providerStatus: 400 } })
          : new AppError('PROVIDER_ERROR'),
    image: (job, output) => ({ prompt: job.prompt, size: '64x64', mimeType: output.mimeType, model: job.model }),
    storeFailureMessage: () => 'The picture could not be kept',
    ...overrides,
  };
  return { handler, calls };
}

interface Harness {
  db: Db;
  bus: Bus;
  ledger: LedgerService;
  storageDir: string;
  /** A runner on the harness's database; what `own` names replaces the shared bus, database or store. */
  queue(
    options?: Partial<JobQueueOptions>,
    own?: { bus?: Bus; storageDir?: string; db?: Db; storage?: LocalImageStorage },
  ): JobQueue;
  user(balance: number, subject?: string): Promise<number>;
}

let users = 0;

/** One database for the file: each test has users of its own, and the line is emptied after it. */
let database: Database;
const open: Array<() => Promise<void>> = [];

beforeAll(async () => {
  database = await pglite.open();
});

afterAll(async () => {
  await database.close();
});

afterEach(async () => {
  for (const call of unanswered.splice(0)) call.fail(new Error('the test ended'));
  for (const close of open.splice(0).reverse()) await close();
  for (const table of [images, userEvents, generationRequests]) await database.db.delete(table);
});

async function harness(): Promise<Harness> {
  const storageDir = await fs.mkdtemp(path.join(os.tmpdir(), 'runner-'));
  const bus = localBus();
  const ledger = new LedgerService(database.db);
  const queues: JobQueue[] = [];
  const thumbnails: Thumbnails[] = [];
  open.push(async () => {
    for (const queue of queues) await queue.stop();
    // Thumbnails are made after a job's answer: the last ones may still be on their way.
    for (const made of thumbnails) await made.drain();
    await fs.rm(storageDir, { recursive: true, force: true });
  });
  return {
    db: database.db,
    bus,
    ledger,
    storageDir,
    queue(options = {}, own = {}) {
      const thumbnailsOf = (storage: LocalImageStorage) => {
        const made = new Thumbnails(database.db, storage);
        thumbnails.push(made);
        return made;
      };
      const storage = own.storage ?? new LocalImageStorage(own.storageDir ?? storageDir);
      const queue = new JobQueue(
        own.db ?? database.db,
        ledger,
        storage,
        thumbnailsOf(storage),
        new EventLog(database.db, own.bus ?? bus),
        {
          appUrl: APP_URL,
          perUserLimit: 4,
          slots: { images: 2, portraits: 1 },
          perInstance: 4,
          pollMs: NO_POLL_MS,
          queueTimeoutMs: 10 * 60_000,
          ...options,
        },
      );
      queues.push(queue);
      return queue;
    },
    async user(balance, subject = `user-${(users += 1)}`) {
      const { user } = await upsertUser(database.db, {
        issuer: 'https://id.example',
        subject,
        email: `${subject}@example.com`,
        name: null,
        avatar: null,
      });
      if (balance > 0) {
        await ledger.credit({
          userId: user.id,
          amount: balance,
          reason: 'purchase',
          idempotencyKey: `${subject}:seed`,
        });
      }
      return user.id;
    },
  };
}

/** A runner that accepts generations and runs none (workers off): the line is the test's. */
function accepting(h: Harness, options: Partial<JobQueueOptions> = {}, own?: Parameters<Harness['queue']>[1]) {
  const queue = h.queue({ workers: false, ...options }, own);
  queue.register('generation', heldHandler().handler);
  return queue;
}

/** A runner that takes jobs, with a held handler for generations. */
function started(h: Harness, ...args: Parameters<Harness['queue']>) {
  const queue = h.queue(...args);
  const { handler, calls } = heldHandler();
  queue.register('generation', handler);
  queue.start();
  return { queue, calls };
}

function submission(userId: number, prompt: string, overrides: Partial<Submission> = {}): Submission {
  return {
    kind: 'generation',
    userId,
    cost: COST,
    request: { model: 'original', prompt, width: 1024, height: 1024, steps: 30 },
    input: { prompt },
    insufficient: (balance) => new AppError('INSUFFICIENT_TOKENS', `short: ${balance}`),
    ...overrides,
  };
}

async function jobRow(db: Executor, id: number): Promise<repo.JobRow> {
  const row = await repo.findJob(db, id);
  if (!row) throw new Error(`no job ${id}`);
  return row;
}

async function ledgerOf(db: Executor, userId: number) {
  return db
    .select({ delta: tokenLedger.delta, reason: tokenLedger.reason, reference: tokenLedger.reference })
    .from(tokenLedger)
    .where(eq(tokenLedger.userId, userId))
    .orderBy(tokenLedger.id);
}

/** The job events of the user's log, as the browser's stream gets them. */
async function jobEvents(h: Harness, userId: number): Promise<Array<{ job: Job; balance: number }>> {
  const rows = await new EventLog(h.db, h.bus).after(userId, 0);
  return rows.filter((row) => row.type === STREAM_EVENTS.job).map((row) => row.data as { job: Job; balance: number });
}

/** Waits until the handler holds `count` calls. */
function calling(calls: Call[], count = 1): Promise<Call[]> {
  return until(async () => (calls.length >= count ? calls : undefined));
}

/**
 * The database as a runner sees it, with its claims held: a runner's only transaction is its
 * claim (server/jobs/repository.ts claimNext), so each one that comes back while `holding`
 * waits, its row already written, until the test releases it.
 */
function heldClaims(db: Db) {
  const held: Array<() => void> = [];
  const state = { holding: true, claims: 0 };
  const gated = new Proxy(db, {
    get(target, key, receiver) {
      if (key !== 'transaction') return Reflect.get(target, key, receiver) as unknown;
      return async (work: (tx: Executor) => Promise<unknown>) => {
        const result = await target.transaction(work);
        state.claims += 1;
        if (state.holding) await new Promise<void>((resolve) => held.push(resolve));
        return result;
      };
    },
  });
  return {
    db: gated,
    claims: () => state.claims,
    release() {
      state.holding = false;
      for (const resolve of held.splice(0)) resolve();
    },
  };
}

describe('submit: the charge, the limit and the job in one statement', () => {
  it('charges the cost, stores the job in line with its input, and tells the user it is queued with the new balance', async () => {
    const h = await harness();
    const queue = accepting(h);
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'a lighthouse'));

    const row = await jobRow(h.db, id);
    expect(row).toMatchObject({ status: 'PENDING', startedAt: null, cost: COST, lane: 'images', kind: 'generation' });
    expect(row.input).toEqual({ prompt: 'a lighthouse' });
    expect(await h.ledger.balance(userId)).toBe(8);
    expect((await ledgerOf(h.db, userId)).at(-1)).toEqual({
      delta: -COST,
      reason: 'generation_charge',
      reference: `generation_request:${id}`,
    });
    const events = await until(async () => ((await jobEvents(h, userId)).length ? jobEvents(h, userId) : undefined));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ balance: 8, job: { id, state: 'queued', position: 1, cost: COST } });
  });

  it('refuses a short balance with the submission’s own refusal, at the balance read, and writes nothing', async () => {
    const h = await harness();
    const queue = accepting(h);
    const userId = await h.user(1);
    await expect(queue.submit(submission(userId, 'too dear'))).rejects.toMatchObject({
      code: 'INSUFFICIENT_TOKENS',
      message: 'short: 1',
    });
    expect(await h.db.select().from(generationRequests)).toEqual([]);
    expect(await h.ledger.balance(userId)).toBe(1);
    expect(await jobEvents(h, userId)).toEqual([]);
  });

  it('refuses a job over the per-user limit with TOO_MANY_JOBS naming the limit, and charges nothing', async () => {
    const h = await harness();
    const queue = accepting(h, { perUserLimit: 2 });
    const userId = await h.user(10);
    await queue.submit(submission(userId, 'one'));
    await queue.submit(submission(userId, 'two'));
    const refusal = await queue.submit(submission(userId, 'three')).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'TOO_MANY_JOBS', status: 429, details: { limit: 2 } });
    expect(await h.ledger.balance(userId)).toBe(6);
    expect(queue.perUserLimit).toBe(2);
  });

  it('refuses a job over the limit as such when the balance still covers it exactly', async () => {
    const h = await harness();
    const queue = accepting(h, { perUserLimit: 1 });
    const userId = await h.user(2 * COST);
    await queue.submit(submission(userId, 'one'));
    await expect(queue.submit(submission(userId, 'two'))).rejects.toMatchObject({ code: 'TOO_MANY_JOBS' });
    expect(await h.ledger.balance(userId)).toBe(COST);
  });

  it('refuses a kind it has no handler for before anything is written', async () => {
    const h = await harness();
    const queue = h.queue({ workers: false });
    const userId = await h.user(10);
    await expect(queue.submit(submission(userId, 'nobody runs this'))).rejects.toThrow('no handler for generation');
    expect(await h.ledger.balance(userId)).toBe(10);
  });

  it('keeps a portrait’s face photo with the job, in the portraits lane', async () => {
    const h = await harness();
    const queue = h.queue({ workers: false });
    queue.register('portrait', heldHandler('portraits').handler);
    const userId = await h.user(10);
    const photo = Buffer.from('face bytes');
    const id = await queue.submit(submission(userId, 'a portrait', { kind: 'portrait', photo }));
    const row = await jobRow(h.db, id);
    expect(row.lane).toBe('portraits');
    expect(Buffer.from(row.photo!)).toEqual(photo);
  });
});

describe('a job from line to result', () => {
  it('sends the stored job to its provider, keeps the picture, and tells queued, running and completed in that order', async () => {
    const h = await harness();
    const { queue, calls } = started(h);
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'a harbour'));
    const [call] = await calling(calls);
    expect(call!.job).toMatchObject({ id, prompt: 'a harbour', input: { prompt: 'a harbour' } });
    expect((await jobRow(h.db, id)).startedAt).not.toBeNull();

    const waited = queue.wait(userId, id);
    call!.answer(await picture());
    const settled = await waited;
    expect(settled.job.status).toBe('COMPLETED');
    expect(settled.balance).toBe(8);
    expect(settled.image).toMatchObject({
      userId,
      prompt: 'a harbour',
      generationRequestId: id,
      mimeType: 'image/png',
    });
    const stored = await fs.readFile(path.join(h.storageDir, settled.image!.fileName));
    expect(stored.equals((await picture()).bytes)).toBe(true);
    expect(settled.image!.fileSize).toBe(stored.length);

    const events = await until(async () => {
      const all = await jobEvents(h, userId);
      return all.length >= 3 ? all : undefined;
    });
    expect(events.map((event) => event.job.state)).toEqual(['queued', 'running', 'completed']);
    expect(events.map((event) => event.balance)).toEqual([8, 8, 8]);
    expect(events[2]!.job).toMatchObject({
      progress: 1,
      position: null,
      etaSeconds: null,
      error: null,
      image: { id: settled.image!.id, url: `${APP_URL}/images/${settled.image!.fileName}` },
    });
    expect(await ledgerOf(h.db, userId)).toHaveLength(2);
  });

  it('lists a completed picture by its thumbnail once one is made, and by the picture itself until then', async () => {
    const h = await harness();
    const { queue, calls } = started(h);
    const userId = await h.user(10);
    const unreadable = await queue.submit(submission(userId, 'not a picture'));
    (await calling(calls))[0]!.answer({ bytes: Buffer.from('not an image'), mimeType: 'image/png' });
    await queue.wait(userId, unreadable);
    const decodable = await queue.submit(submission(userId, 'a picture'));
    (await calling(calls, 2))[1]!.answer(await picture());
    await queue.wait(userId, decodable);
    const thumbnail = await until(async () => (await repo.imageOfJob(h.db, decodable))?.thumbnailFileName ?? undefined);

    const { jobs } = await queue.list(userId);
    const byId = new Map(jobs.map((job) => [job.id, job]));
    const plain = (await repo.imageOfJob(h.db, unreadable))!;
    expect(plain.thumbnailFileName).toBeNull();
    expect(byId.get(unreadable)!.image!.thumbnailUrl).toBe(`${APP_URL}/images/${plain.fileName}`);
    expect(byId.get(decodable)!.image!.thumbnailUrl).toBe(`${APP_URL}/images/${thumbnail}`);
  });

  it('stores the handler’s failure (code, text, details) and refunds the cost once', async () => {
    const h = await harness();
    const { queue, calls } = started(h);
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'refused'));
    (await calling(calls))[0]!.fail(new ProviderRefusal('bad prompt'));
    const settled = await queue.wait(userId, id);

    expect(settled.job).toMatchObject({
      status: 'FAILED',
      errorCode: 'PROVIDER_ERROR',
      errorMessage: 'refused: bad prompt',
      errorDetails: { providerStatus: 400 },
    });
    expect(settled.image).toBeUndefined();
    expect(settled.balance).toBe(10);
    expect(await ledgerOf(h.db, userId)).toEqual([
      expect.objectContaining({ reason: 'purchase' }),
      expect.objectContaining({ delta: -COST, reason: 'generation_charge' }),
      { delta: COST, reason: 'generation_refund', reference: `generation_request:${id}` },
    ]);
    const failure = JobQueue.failureOf(settled.job);
    expect(failure).toMatchObject({
      code: 'PROVIDER_ERROR',
      message: 'refused: bad prompt',
      details: { providerStatus: 400 },
    });
    const events = await until(async () => {
      const all = await jobEvents(h, userId);
      return all.length >= 3 ? all : undefined;
    });
    expect(events[2]).toMatchObject({
      balance: 10,
      job: { state: 'failed', progress: 1, error: { code: 'PROVIDER_ERROR', message: 'refused: bad prompt' } },
    });
  });

  it('stores an application error the provider call raised (a filtered picture) as a failure, not a cancel', async () => {
    const h = await harness();
    const { queue, calls } = started(h);
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'filtered'));
    (await calling(calls))[0]!.fail(
      new AppError('CONTENT_FILTERED', undefined, { details: { finishReason: 'CONTENT_FILTERED' } }),
    );
    const settled = await queue.wait(userId, id);
    expect(settled.job).toMatchObject({
      errorCode: 'CONTENT_FILTERED',
      errorDetails: { finishReason: 'CONTENT_FILTERED' },
    });
    expect(settled.balance).toBe(10);
    const [listed] = (await queue.list(userId)).jobs;
    expect(listed!.state).toBe('failed');
  });

  it('reads a failed row without a code or a text as PROVIDER_ERROR "Generation failed"', async () => {
    const h = await harness();
    const queue = accepting(h);
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'bare failure'));
    await h.db
      .update(generationRequests)
      .set({ status: 'FAILED', errorCode: null, errorMessage: null })
      .where(eq(generationRequests.id, id));
    const row = await jobRow(h.db, id);
    const failure = JobQueue.failureOf(row);
    expect(failure).toMatchObject({ code: 'PROVIDER_ERROR', message: 'Generation failed', status: 502 });
    expect(failure.details).toBeUndefined();
    const [listed] = (await queue.list(userId)).jobs;
    expect(listed!.error).toEqual({ code: 'PROVIDER_ERROR', message: 'Generation failed' });
    expect(listed!.state).toBe('failed');
  });

  it('refunds a picture the store refuses, as STORAGE_UNAVAILABLE, and keeps no image row', async () => {
    const h = await harness();
    // A file where the folder should be: every write into it fails.
    const blocked = path.join(h.storageDir, 'blocked');
    await fs.writeFile(blocked, '');
    const { queue, calls } = started(h, {}, { storageDir: path.join(blocked, 'images') });
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'nowhere to keep it'));
    (await calling(calls))[0]!.answer(await picture());
    const settled = await queue.wait(userId, id);
    expect(settled.job).toMatchObject({
      status: 'FAILED',
      errorCode: 'STORAGE_UNAVAILABLE',
      errorMessage: 'The image could not be saved, and your tokens were refunded',
    });
    expect(settled.balance).toBe(10);
    expect(await h.db.select().from(images)).toEqual([]);
  });

  it('removes the stored file and refunds when the image row cannot be written, with the handler’s text', async () => {
    const h = await harness();
    const queue = h.queue();
    const { handler, calls } = heldHandler('images', {
      image: () => {
        throw new Error('the row is not valid');
      },
    });
    queue.register('generation', handler);
    queue.start();
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'unrecordable'));
    (await calling(calls))[0]!.answer(await picture());
    const settled = await queue.wait(userId, id);
    expect(settled.job).toMatchObject({
      status: 'FAILED',
      errorCode: 'PROVIDER_ERROR',
      errorMessage: 'The picture could not be kept',
    });
    expect(settled.balance).toBe(10);
    expect(await fs.readdir(h.storageDir)).toEqual([]);
  });

  it('keeps the code of an application error raised while the result is recorded', async () => {
    const h = await harness();
    const queue = h.queue();
    const { handler, calls } = heldHandler('images', {
      image: () => {
        throw new AppError('CONTENT_FILTERED', 'filtered while recording');
      },
    });
    queue.register('generation', handler);
    queue.start();
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'filtered'));
    (await calling(calls))[0]!.answer(await picture());
    const settled = await queue.wait(userId, id);
    expect(settled.job).toMatchObject({ errorCode: 'CONTENT_FILTERED', errorMessage: 'filtered while recording' });
    expect(settled.balance).toBe(10);
  });

  it('fails and refunds a job it cannot run (no stored input, or a kind it has no handler for) without calling anyone', async () => {
    const h = await harness();
    const front = accepting(h);
    front.register('portrait', heldHandler('portraits').handler);
    const userId = await h.user(10);
    const old = await front.submit(submission(userId, 'from before durable jobs', { input: null }));
    const portrait = await front.submit(submission(userId, 'a portrait', { kind: 'portrait' }));

    const { queue: worker, calls } = started(h, { instanceId: 'images-only' });
    for (const id of [old, portrait]) {
      const settled = await worker.wait(userId, id);
      expect(settled.job).toMatchObject({
        status: 'FAILED',
        errorCode: 'INTERNAL',
        errorMessage: 'The job could not be run',
      });
    }
    expect(calls).toEqual([]);
    expect(await h.ledger.balance(userId)).toBe(10);
  });
});

describe('cancel', () => {
  it('answers NOT_FOUND for a job that is not the user’s or does not exist, and JOB_FINISHED for a finished one', async () => {
    const h = await harness();
    const { queue, calls } = started(h);
    const owner = await h.user(10);
    const stranger = await h.user(10);
    const id = await queue.submit(submission(owner, 'mine'));
    await expect(queue.cancel(stranger, id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(queue.cancel(owner, id + 100)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(queue.wait(owner, id + 100)).rejects.toMatchObject({ code: 'NOT_FOUND' });

    (await calling(calls))[0]!.answer(await picture());
    await queue.wait(owner, id);
    await expect(queue.cancel(owner, id)).rejects.toMatchObject({ code: 'JOB_FINISHED', status: 409 });
    expect(await h.ledger.balance(owner)).toBe(8);
  });

  it('refunds a job in line at once: cancelled with its text, never sent, and the answer says so', async () => {
    const h = await harness();
    const queue = accepting(h);
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'changed my mind'));
    const answer = await queue.cancel(userId, id);
    expect(answer.balance).toBe(10);
    expect(answer.job).toMatchObject({
      id,
      state: 'cancelled',
      position: null,
      error: { code: 'JOB_CANCELLED', message: 'The job was cancelled and your tokens were refunded' },
    });
    expect((await ledgerOf(h.db, userId)).filter((entry) => entry.reason === 'generation_refund')).toHaveLength(1);
    await expect(queue.cancel(userId, id)).rejects.toMatchObject({ code: 'JOB_FINISHED' });
    expect(await h.ledger.balance(userId)).toBe(10);
  });

  it('stops a running job at its provider with JOB_CANCELLED, refunds it once, and keeps no late answer', async () => {
    const h = await harness();
    const queue = h.queue();
    const { handler, calls } = heldHandler('images', {
      // A provider that finishes its answer even when asked to stop.
      work: (job, signal) =>
        new Promise<PaidJobOutput>((resolve, reject) => {
          const call: Call = { job, signal, answer: resolve, fail: reject };
          calls.push(call);
          unanswered.push(call);
        }),
    });
    queue.register('generation', handler);
    queue.start();
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'stop it'));
    const [call] = await calling(calls);
    const cancelled = queue.cancel(userId, id);
    await until(async () => (call!.signal.aborted ? true : undefined));
    expect(call!.signal.reason).toMatchObject({ code: 'JOB_CANCELLED' });
    call!.answer(await picture());
    const answer = await cancelled;
    expect(answer.job.state).toBe('cancelled');
    expect(answer.balance).toBe(10);
    expect(await h.db.select().from(images)).toEqual([]);
    expect(await fs.readdir(h.storageDir)).toEqual([]);
    expect((await ledgerOf(h.db, userId)).filter((entry) => entry.reason === 'generation_refund')).toHaveLength(1);
  });

  it('does not send a job whose cancel was asked for before its worker took it', async () => {
    const h = await harness();
    const front = accepting(h);
    const userId = await h.user(10);
    const id = await front.submit(submission(userId, 'cancelled on its way'));
    expect(await repo.requestCancel(h.db, userId, id)).toBe(true);

    const worker = h.queue();
    // A handler that words every failure its own way: the runner knows its own cancel.
    const { handler, calls } = heldHandler('images', { failure: () => new AppError('PROVIDER_ERROR') });
    worker.register('generation', handler);
    worker.start();
    const settled = await worker.wait(userId, id);
    expect(settled.job).toMatchObject({ status: 'FAILED', errorCode: 'JOB_CANCELLED' });
    expect(settled.balance).toBe(10);
    expect(calls).toEqual([]);
  });
});

describe('the list: places, estimates and progress (docs/architecture.md, "Durable jobs")', () => {
  it('places jobs in line per provider and estimates each by the rounds of slots ahead of it', async () => {
    const h = await harness();
    const queue = accepting(h, { slots: { images: 2, portraits: 1 }, perUserLimit: 10 });
    queue.register('portrait', heldHandler('portraits').handler);
    const userId = await h.user(100);
    const ids = [];
    for (const prompt of ['i1', 'i2', 'i3']) ids.push(await queue.submit(submission(userId, prompt)));
    for (const prompt of ['p1', 'p2']) ids.push(await queue.submit(submission(userId, prompt, { kind: 'portrait' })));
    const { jobs, perUserLimit } = await queue.list(userId);
    expect(perUserLimit).toBe(10);
    expect(jobs.map((job) => [job.prompt, job.position, job.etaSeconds, job.progress])).toEqual([
      // Before anything finished: Stability's usual 10 s, Replicate's 30 s.
      ['i1', 1, 10, 0],
      ['i2', 2, 10, 0],
      ['i3', 3, 20, 0],
      ['p1', 1, 30, 0],
      ['p2', 2, 60, 0],
    ]);
  });

  it('estimates by the mean run of the lane’s completed jobs, and a running job by the time it has run', async () => {
    const h = await harness();
    const front = accepting(h, { perUserLimit: 10 });
    const userId = await h.user(100);
    const done = await front.submit(submission(userId, 'done'));
    const running = await front.submit(submission(userId, 'running'));
    const waiting = await front.submit(submission(userId, 'waiting'));
    const start = new Date('2026-01-01T10:00:00Z');
    // One completed job that ran 4 s.
    await h.db
      .update(generationRequests)
      .set({ status: 'COMPLETED', startedAt: start, finishedAt: new Date(start.getTime() + 4000) })
      .where(eq(generationRequests.id, done));
    await h.db.update(generationRequests).set({ startedAt: start }).where(eq(generationRequests.id, running));

    // A queue that has read no mean yet.
    const queue = h.queue({ workers: false, perUserLimit: 10 });
    const at = (ms: number) => queue.list(userId, new Date(start.getTime() + ms));
    const find = (jobs: Job[], id: number) => jobs.find((job) => job.id === id)!;

    const early = (await at(1000)).jobs;
    expect(find(early, running)).toMatchObject({
      state: 'running',
      position: null,
      etaSeconds: 3,
      progress: 0.25,
      startedAt: start.toISOString(),
      finishedAt: null,
    });
    expect(find(early, waiting)).toMatchObject({ state: 'queued', position: 1, etaSeconds: 4, progress: 0 });
    expect(find(early, done)).toMatchObject({
      state: 'completed',
      position: null,
      etaSeconds: null,
      progress: 1,
      finishedAt: new Date(start.getTime() + 4000).toISOString(),
    });
    expect(find(early, waiting)).toMatchObject({ startedAt: null, finishedAt: null });
    // Past the mean: nearly done, never done before it is.
    const late = (await at(60_000)).jobs;
    expect(find(late, running)).toMatchObject({ etaSeconds: 0, progress: 0.95 });
  });

  it('shows the active jobs oldest first, then the finished ones of the last day newest first, and only the owner’s', async () => {
    const h = await harness();
    const queue = accepting(h, { perUserLimit: 10 });
    const userId = await h.user(100);
    const other = await h.user(100);
    const ids: number[] = [];
    for (const prompt of ['old', 'yesterday', 'today', 'active 1', 'active 2']) {
      ids.push(await queue.submit(submission(userId, prompt)));
    }
    await queue.submit(submission(other, 'not yours'));
    const now = new Date('2026-03-01T12:00:00Z');
    const finished = (id: number, hoursAgo: number) =>
      h.db
        .update(generationRequests)
        .set({
          status: 'FAILED',
          errorCode: 'PROVIDER_ERROR',
          finishedAt: new Date(now.getTime() - hoursAgo * 3600_000),
        })
        .where(eq(generationRequests.id, id));
    await finished(ids[0]!, 25);
    await finished(ids[1]!, 20);
    await finished(ids[2]!, 1);
    const { jobs } = await queue.list(userId, now);
    expect(jobs.map((job) => job.prompt)).toEqual(['active 1', 'active 2', 'today', 'yesterday']);
  });
});

describe('the reconciler', () => {
  it('refunds a running job whose heartbeat stopped, and a job in line past the deadline, each once; live ones stay', async () => {
    const h = await harness();
    const queue = accepting(h, { perUserLimit: 10, queueTimeoutMs: 60_000 });
    const userId = await h.user(100);
    const dead = await queue.submit(submission(userId, 'its instance died'));
    const live = await queue.submit(submission(userId, 'still beating'));
    const expired = await queue.submit(submission(userId, 'waited too long'));
    const young = await queue.submit(submission(userId, 'just queued'));
    // Two claims by an instance, one of which stopped beating two minutes ago.
    await h.db
      .update(generationRequests)
      .set({ startedAt: sql`now()`, claimedBy: 'gone', heartbeatAt: sql`now() - interval '2 minutes'` })
      .where(eq(generationRequests.id, dead));
    await h.db
      .update(generationRequests)
      .set({ startedAt: sql`now()`, claimedBy: 'alive', heartbeatAt: sql`now()` })
      .where(eq(generationRequests.id, live));
    await h.db
      .update(generationRequests)
      .set({ createdAt: sql`now() - interval '2 minutes'` })
      .where(eq(generationRequests.id, expired));

    expect(await queue.reconcile(60_000)).toBe(2);
    expect(await jobRow(h.db, dead)).toMatchObject({
      status: 'FAILED',
      errorCode: 'PROVIDER_TIMEOUT',
      errorMessage: 'Generation was abandoned and refunded',
    });
    expect(await jobRow(h.db, expired)).toMatchObject({
      status: 'FAILED',
      errorCode: 'SERVICE_UNAVAILABLE',
      errorMessage: 'The job waited too long for its turn and was refunded',
    });
    expect((await jobRow(h.db, live)).status).toBe('PENDING');
    expect((await jobRow(h.db, young)).status).toBe('PENDING');
    expect(await h.ledger.balance(userId)).toBe(100 - 2 * COST);
    expect(await queue.reconcile(60_000)).toBe(0);
  });
});

describe('stop: the instance shuts down', () => {
  it('gives a running job its grace: one that answers in time is kept and paid', async () => {
    const h = await harness();
    const { queue, calls } = started(h);
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'nearly done'));
    const [call] = await calling(calls);
    const stopped = queue.stop(NO_POLL_MS);
    call!.answer(await picture());
    await stopped;
    expect(call!.signal.aborted).toBe(false);
    expect((await jobRow(h.db, id)).status).toBe('COMPLETED');
    expect(await h.ledger.balance(userId)).toBe(8);
  });

  it('stops one still at its provider when the grace ends, refunded with the restart’s text, before stop returns', async () => {
    const h = await harness();
    const { queue, calls } = started(h);
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'too slow'));
    const [call] = await calling(calls);
    await queue.stop(50);
    expect(call!.signal.reason).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(await jobRow(h.db, id)).toMatchObject({
      status: 'FAILED',
      errorCode: 'SERVICE_UNAVAILABLE',
      errorMessage: 'The server restarted before the job finished; your tokens were refunded',
    });
    expect(await h.ledger.balance(userId)).toBe(10);
  });

  it('takes nothing more once stopped, and leaves the line to other instances', async () => {
    const h = await harness();
    const { queue, calls } = started(h, { pollMs: 20 });
    await queue.stop();
    const front = accepting(h);
    const userId = await h.user(10);
    const id = await front.submit(submission(userId, 'for another instance'));
    // Another instance, polling, takes it; the stopped one never did.
    const { calls: secondCalls } = started(h, { instanceId: 'other' });
    const [call] = await calling(secondCalls);
    expect(call!.job.id).toBe(id);
    expect((await jobRow(h.db, id)).claimedBy).toBe('other');
    expect(calls).toEqual([]);
  });

  it('an instance without workers takes no job however it is poked', async () => {
    const h = await harness();
    const { queue: idle, calls } = started(h, { workers: false, pollMs: 20 });
    const userId = await h.user(10);
    const id = await idle.submit(submission(userId, 'waits'));
    const { calls: secondCalls } = started(h, { instanceId: 'later' });
    expect((await calling(secondCalls))[0]!.job.id).toBe(id);
    expect(calls).toEqual([]);
  });
});

describe('wake-ups: a job starts without waiting for the poll', () => {
  it('starts a job another instance accepted as soon as its poke arrives on the bus', async () => {
    const h = await harness();
    const { calls } = started(h, { instanceId: 'worker' });
    const front = accepting(h, { instanceId: 'front' });
    const userId = await h.user(10);
    const id = await front.submit(submission(userId, 'poked'));
    expect((await calling(calls))[0]!.job.id).toBe(id);
  });

  it('claims again when a job arrives while a claim that found nothing is still on its way', async () => {
    const h = await harness();
    const claims = heldClaims(h.db);
    const { queue, calls } = started(h, {}, { db: claims.db, bus: localBus() });
    await until(async () => (claims.claims() === 1 ? true : undefined));
    const userId = await h.user(10);
    const id = await queue.submit(submission(userId, 'came during a claim'));
    claims.release();
    expect((await calling(calls))[0]!.job.id).toBe(id);
  });

  it('finds a job no poke told it of at the next poll', async () => {
    const h = await harness();
    // On a bus of its own: it hears nothing of what the other instance accepts.
    const { calls } = started(h, { pollMs: 30 }, { bus: localBus() });
    const front = accepting(h);
    const userId = await h.user(10);
    const id = await front.submit(submission(userId, 'found by the poll'));
    expect((await calling(calls))[0]!.job.id).toBe(id);
  });

  it('a waiting request hears a job another instance finished through the user’s events', async () => {
    const h = await harness();
    const { calls } = started(h, { instanceId: 'worker' });
    const front = accepting(h, { instanceId: 'front' });
    const userId = await h.user(10);
    const id = await front.submit(submission(userId, 'finished elsewhere'));
    const waited = front.wait(userId, id);
    (await calling(calls))[0]!.answer(await picture());
    expect((await waited).job.status).toBe('COMPLETED');
  });

  it('a waiting request that hears nothing reads the job again every poll', async () => {
    const h = await harness();
    const { queue: worker, calls } = started(h, { instanceId: 'worker' });
    // On a bus of its own: no poke from the worker reaches it.
    const front = accepting(h, { pollMs: 30 }, { bus: localBus() });
    const userId = await h.user(10);
    const id = await worker.submit(submission(userId, 'found by the poll'));
    const waited = front.wait(userId, id);
    (await calling(calls))[0]!.answer(await picture());
    expect((await waited).job.status).toBe('COMPLETED');
  });
});

describe('a job settled elsewhere while its picture is being stored', () => {
  it('keeps no picture: the file is removed, no image is recorded, and the refund stays the only one', async () => {
    const h = await harness();
    let release!: () => void;
    const saved = new Promise<void>((resolve) => (release = resolve));
    let written: string | undefined;
    // A store that writes the file, then is slow to answer.
    class SlowStorage extends LocalImageStorage {
      override async save(bytes: Buffer, mimeType: PaidJobOutput['mimeType']) {
        const stored = await super.save(bytes, mimeType);
        written = stored.fileName;
        await saved;
        return stored;
      }
    }
    const { queue: worker, calls } = started(h, {}, { storage: new SlowStorage(h.storageDir) });
    const userId = await h.user(10);
    const id = await worker.submit(submission(userId, 'judged dead while storing'));
    (await calling(calls))[0]!.answer(await picture());
    await until(async () => written);
    // Another instance's reconciler takes the job for abandoned (its heartbeat looks stopped).
    await h.db
      .update(generationRequests)
      .set({ heartbeatAt: sql`now() - interval '2 minutes'` })
      .where(eq(generationRequests.id, id));
    expect(await h.queue({ workers: false }).reconcile(60_000)).toBe(1);
    release();
    await until(async () => ((await fs.readdir(h.storageDir)).length === 0 ? true : undefined));
    expect(await h.db.select().from(images)).toEqual([]);
    expect(await jobRow(h.db, id)).toMatchObject({ status: 'FAILED', errorCode: 'PROVIDER_TIMEOUT' });
    expect((await ledgerOf(h.db, userId)).filter((entry) => entry.reason === 'generation_refund')).toHaveLength(1);
    expect(await h.ledger.balance(userId)).toBe(10);
  });
});

describe('stop, while jobs wait in line', () => {
  it('starts none of them, even when a running job ends during the grace: another instance takes them', async () => {
    const h = await harness();
    const { queue: worker, calls } = started(h, { perInstance: 1 });
    const userId = await h.user(10);
    await worker.submit(submission(userId, 'running at stop'));
    const waiting = await worker.submit(submission(userId, 'waiting at stop'));
    const [call] = await calling(calls);
    const stopped = worker.stop(NO_POLL_MS);
    call!.answer(await picture());
    await stopped;

    const { calls: secondCalls } = started(h, { instanceId: 'other' });
    expect((await calling(secondCalls))[0]!.job.id).toBe(waiting);
    expect(calls).toHaveLength(1);
  });

  it('puts back in line a job its claim brought back after the stop began, and tells the other instances', async () => {
    const h = await harness();
    const front = accepting(h);
    const userId = await h.user(10);
    const id = await front.submit(submission(userId, 'claimed at stop'));
    const claims = heldClaims(h.db);
    const { queue: worker, calls } = started(h, { instanceId: 'stopping' }, { db: claims.db });
    await until(async () => (claims.claims() === 1 ? true : undefined));
    expect((await jobRow(h.db, id)).claimedBy).toBe('stopping');
    const { calls: secondCalls } = started(h, { instanceId: 'other' });

    const stopped = worker.stop();
    claims.release();
    await stopped;
    // The other instance hears of it at once (its poll is an hour away).
    expect((await calling(secondCalls))[0]!.job.id).toBe(id);
    expect(calls).toEqual([]);
  });
});

describe('the heartbeat of a running job (docs/architecture.md: every 10 s)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps the row alive, sees a Cancel whose poke was lost at the next beat, and beats no more once the job ended', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const h = await harness();
    const { queue: worker, calls } = started(h, { instanceId: 'beating' });
    const userId = await h.user(10);
    const id = await worker.submit(submission(userId, 'beating'));
    const [call] = await calling(calls);
    const old = new Date(Date.now() - 5 * 60_000);
    await h.db.update(generationRequests).set({ heartbeatAt: old }).where(eq(generationRequests.id, id));
    vi.advanceTimersByTime(10_000);
    await until(async () => ((await jobRow(h.db, id)).heartbeatAt > old ? true : undefined));

    // A Cancel taken by another instance, its message on the bus lost: only the row says so.
    expect(await repo.requestCancel(h.db, userId, id)).toBe(true);
    expect(call!.signal.aborted).toBe(false);
    vi.advanceTimersByTime(10_000);
    await until(async () => (call!.signal.aborted ? true : undefined));
    expect(call!.signal.reason).toMatchObject({ code: 'JOB_CANCELLED' });
    const settled = await worker.wait(userId, id);
    expect(settled.job).toMatchObject({ status: 'FAILED', errorCode: 'JOB_CANCELLED' });
    expect(settled.balance).toBe(10);
    // Only the line's poll is left: the job's heartbeat stopped with it.
    await until(async () => (vi.getTimerCount() === 1 ? true : undefined));
  });
});
