// One file: submit, claim, run, settle, cancel and stop share the runner's slots and timers; split,
// the rule that each job is settled once would span files.
import { randomUUID } from 'node:crypto';
import {
  FINISHED_JOBS_SHOWN,
  FINISHED_JOBS_SHOWN_MS,
  JOB_KINDS,
  STREAM_EVENTS,
  type Job,
  type JobKind,
  type JobList,
  type JobState,
} from '../../src/domain/jobs';
import type { ErrorCode } from '../../src/domain/errors';
import type { Db } from '../db/client';
import { AppError, isAppError } from '../errors';
import type { EventLog } from '../events/service';
import type { ImageRow } from '../images/repository';
import type { ImageStorage } from '../images/storage';
import type { Thumbnails } from '../images/thumbnails';
import type { LedgerService } from '../ledger/service';
import {
  countGeneration,
  countJobFinished,
  countPortrait,
  countTokensCharged,
  countTokensRefunded,
  type JobOutcome,
  type QueueLaneReading,
} from '../metrics';
import { keepAlive, LIVENESS } from '../background/liveness';
import type { PaidJobImage, PaidJobOutput, PaidJobRequest } from './paid-job';
import * as repo from './repository';
import { Stoppable } from '../background/stops';

/** How one kind of job is run: the provider call, what a failure says, the image row. */
export interface JobHandler<T extends PaidJobOutput = PaidJobOutput> {
  /** The provider whose slots it waits for. */
  lane: repo.Lane;
  /** The paid work (a provider call), outside any transaction; `signal` aborts on cancel and shutdown. */
  work(job: repo.JobRow, signal: AbortSignal): Promise<T>;
  /** What the user hears when the work failed; the charge is refunded either way. */
  failure(error: unknown, job: repo.JobRow): AppError;
  /** The image row for the work's output. */
  image(job: repo.JobRow, output: T): PaidJobImage;
  /** The user's text for a failure while storing the result. */
  storeFailureMessage(job: repo.JobRow): string;
}

export interface Submission {
  kind: JobKind;
  userId: number;
  cost: number;
  request: PaidJobRequest;
  /** What the handler needs to run it, as JSON. */
  input: unknown;
  /** A portrait's decoded face photo, kept only while the job is PENDING. */
  photo?: Buffer;
  /** The refusal when the balance does not cover the cost (nothing was written). */
  insufficient(balance: number): AppError;
}

export interface Settled {
  job: repo.JobRow;
  image?: ImageRow;
  balance: number;
}

export interface JobQueueOptions {
  appUrl: string;
  /** Jobs a user may have queued or running at once (JOBS_PER_USER). */
  perUserLimit: number;
  /** Jobs running at once at each provider, over every instance (JOBS_SLOTS_*). */
  slots: Record<repo.Lane, number>;
  /** Jobs this instance runs at once (JOBS_PER_INSTANCE). */
  perInstance: number;
  /** How often the line and a waited-for job are looked at without a poke (JOBS_POLL_MS). */
  pollMs: number;
  /** A job still in line after this long is refunded (JOBS_QUEUE_TIMEOUT_MS). */
  queueTimeoutMs: number;
  /** 0: this instance takes no jobs (tests that drive the line by hand). */
  workers?: boolean;
  instanceId?: string;
}

/** Estimates before a lane has finished anything: Stability's and Replicate's usual times. */
const DEFAULT_RUN_MS: Record<repo.Lane, number> = { images: 10_000, portraits: 30_000 };

const CANCELLED: repo.Settlement = {
  code: 'JOB_CANCELLED',
  message: 'The job was cancelled and your tokens were refunded',
};
const ABANDONED: repo.Settlement = { code: 'PROVIDER_TIMEOUT', message: 'Generation was abandoned and refunded' };
const SHUTDOWN = 'The server restarted before the job finished; your tokens were refunded';
const EXPIRED: repo.Settlement = {
  code: 'SERVICE_UNAVAILABLE',
  message: 'The job waited too long for its turn and was refunded',
};

/**
 * Durable jobs (issue #28; DESIGN section 8 "Jobs"): a generation or a portrait is a
 * generation_requests row from its first moment.
 *
 * 1. `submit`: one atomic statement charges, checks the per-user limit and stores the job
 *    with its input (PENDING, in line); the line is poked.
 * 2. A worker on any instance claims the oldest job whose provider has a free slot
 *    (repo.claimNext), runs the provider call outside any transaction with the row's
 *    heartbeat kept fresh, writes the file, then one statement stores COMPLETED and the
 *    image; or FAILED and the refund in one transaction.
 * 3. Every change is an event in the user's log (server/events), which the browser's
 *    stream and `wait` follow from any instance.
 *
 * The runner is the claim-with-lease kind on the request table itself rather than pg-boss
 * or graphile-worker: the job must be created in the same statement as the charge and the
 * limit check (a second queue table would have to be kept in step with it), and the
 * embedded database is one in-process connection, where those libraries' pools and their
 * LISTEN connection do not exist. A worker that dies stops beating; `reconcile` on any
 * instance refunds its jobs once (the settle is conditional on PENDING).
 */
export class JobQueue {
  private readonly handlers = new Map<JobKind, JobHandler>();
  /** Jobs this instance runs, with the means to stop each. */
  private readonly running: Stoppable<{ controller: AbortController; done: Promise<void> }>;
  /** Resolvers of `wait` calls on this instance, by job id. */
  private readonly waiters = new Map<number, Set<() => void>>();
  /** The last announcement of each job, so the next one follows it. */
  private readonly announcing = new Map<number, Promise<void>>();
  private readonly meanRun = new Map<repo.Lane, { ms: number; at: number }>();
  private readonly instanceId: string;
  private started = false;
  private stopping = false;
  private pumping = false;
  private pumpAgain = false;
  /** The claiming loop now running (stop waits for it: a claim may be on its way). */
  private pumpLoop: Promise<void> = Promise.resolve();
  private unsubscribe?: () => void;
  private timer?: ReturnType<typeof setInterval>;

  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    private readonly storage: ImageStorage,
    private readonly thumbnails: Thumbnails,
    private readonly events: EventLog,
    private readonly options: JobQueueOptions,
    private readonly log: (error: unknown, what: string) => void = () => {},
  ) {
    this.instanceId = options.instanceId ?? randomUUID();
    this.running = new Stoppable(events.bus, 'cancel', () => new AppError('JOB_CANCELLED'));
  }

  register<T extends PaidJobOutput>(kind: JobKind, handler: JobHandler<T>): void {
    this.handlers.set(kind, handler);
  }

  /**
   * Throws, naming them, when kinds of JOB_KINDS have no handler: checked before the server
   * starts, so an instance that could not run a kind refuses to start rather than take its
   * jobs off the shared line and refund them, or refuse them one request at a time.
   */
  requireHandlers(): void {
    const missing = JOB_KINDS.filter((kind) => !this.handlers.has(kind));
    if (missing.length === 0) return;
    const kinds = missing.map((kind) => `"${kind}"`).join(', ');
    throw new Error(`no handler for the job kind ${kinds}: its feature must register one (JobQueue.register)`);
  }

  get perUserLimit(): number {
    return this.options.perUserLimit;
  }

  /** Charges and stores the job (nothing is written when refused); returns its id. */
  async submit(submission: Submission): Promise<number> {
    const handler = this.handlers.get(submission.kind);
    if (!handler) throw new Error(`no handler for ${submission.kind} jobs`);
    const count = submission.kind === 'portrait' ? countPortrait : countGeneration;
    const opened = await repo.openJob(
      this.db,
      {
        ...submission.request,
        userId: submission.userId,
        cost: submission.cost,
        kind: submission.kind,
        lane: handler.lane,
        input: submission.input,
        photo: submission.photo ?? null,
      },
      this.options.perUserLimit,
    );
    if (opened.kind === 'refused') {
      count(submission.request.model, 'refused');
      if (opened.reason === 'balance') throw submission.insufficient(opened.balance);
      throw new AppError('TOO_MANY_JOBS', undefined, { details: { limit: this.options.perUserLimit } });
    }
    countTokensCharged(`${submission.kind}_charge`, submission.cost);
    await this.announce(opened.job.id, 'queued');
    this.poke();
    return opened.job.id;
  }

  /**
   * Resolves once the job has settled (COMPLETED or FAILED), whichever instance ran it:
   * this instance's worker tells it at once, others through the user's event log, and the
   * row is read again every `pollMs` in case a poke was lost.
   */
  async wait(userId: number, id: number): Promise<Settled> {
    for (;;) {
      const job = await repo.findJob(this.db, id);
      if (!job) throw new AppError('NOT_FOUND');
      if (job.status !== 'PENDING') {
        const image = job.status === 'COMPLETED' ? await repo.imageOfJob(this.db, id) : undefined;
        return { job, image, balance: await repo.balanceNow(this.db, userId) };
      }
      await new Promise<void>((resolve) => {
        const waiters = this.waiters.get(id) ?? new Set();
        this.waiters.set(id, waiters);
        const done = () => {
          clearTimeout(timer);
          stopWatching();
          waiters.delete(done);
          if (waiters.size === 0) this.waiters.delete(id);
          resolve();
        };
        const timer = setTimeout(done, this.options.pollMs);
        const stopWatching = this.events.watch(userId, done);
        waiters.add(done);
      });
    }
  }

  /** A settled job as the error its waiting request answers with. */
  static failureOf(job: repo.JobRow): AppError {
    const code = (job.errorCode ?? 'PROVIDER_ERROR') as ErrorCode;
    const details = (job.errorDetails ?? undefined) as Record<string, unknown> | undefined;
    return new AppError(code, job.errorMessage ?? undefined, details ? { details } : undefined);
  }

  /**
   * The user cancels a job: one still in line is refunded at once; a running one is
   * stopped by its worker (the provider's work cancelled where it can be) and refunded.
   * A finished one is refused with JOB_FINISHED; another user's is NOT_FOUND.
   */
  async cancel(userId: number, id: number): Promise<{ job: Job; balance: number }> {
    const found = await repo.findOwnedJob(this.db, userId, id);
    if (!found) throw new AppError('NOT_FOUND');
    if (found.status !== 'PENDING') throw new AppError('JOB_FINISHED');
    if (found.startedAt === null && (await this.failAndRefund(found, CANCELLED, { queued: true }))) {
      return this.current(userId, id);
    }
    // It started meanwhile (or already ran): its worker stops it.
    if (!(await repo.requestCancel(this.db, userId, id))) throw new AppError('JOB_FINISHED');
    await this.running.stop(id).catch((error) => this.log(error, 'cancel poke'));
    // The answer shows the job settled when its worker is quick about it; the stream tells the rest.
    await Promise.race([this.wait(userId, id), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    return this.current(userId, id);
  }

  /** GET /api/jobs: the user's active jobs, oldest first, then the recent finished ones. */
  async list(userId: number, now = new Date()): Promise<JobList> {
    const rows = await repo.userJobs(
      this.db,
      userId,
      new Date(now.getTime() - FINISHED_JOBS_SHOWN_MS),
      FINISHED_JOBS_SHOWN,
    );
    const jobs = await Promise.all(rows.map(({ job, image }) => this.toJob(job, image ?? undefined, now)));
    return { jobs, perUserLimit: this.options.perUserLimit };
  }

  /** Every lane's line as the database holds it now, for /metrics (over every instance). */
  lanesNow(): Promise<QueueLaneReading[]> {
    return repo.lanesNow(this.db);
  }

  /** Starts taking jobs: at once, on every poke of the line, and every `pollMs`. */
  start(): void {
    if (this.started || this.options.workers === false) return;
    this.started = true;
    this.unsubscribe = this.events.bus.subscribe('jobs', (message) => {
      if (!this.running.receive(message)) this.pump();
    });
    this.timer = setInterval(() => this.pump(), this.options.pollMs);
    this.timer.unref();
    this.pump();
  }

  /**
   * Takes no more jobs and gives those this instance runs `graceMs` to finish; the rest are
   * stopped at their provider and refunded, so nothing runs on that nobody waits for. Jobs
   * still in line stay there for any instance. Resolves once every job it ran has settled.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    clearInterval(this.timer);
    // A claim already sent can still come back with a job: the loop puts it back in line.
    await this.pumpLoop;
    const settled = Promise.allSettled([...this.running.values()].map((r) => r.done));
    if (graceMs > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    for (const { controller } of this.running.values()) controller.abort(new AppError('SERVICE_UNAVAILABLE', SHUTDOWN));
    await settled;
    // Requests still waiting here for a job in line keep waiting for whichever instance takes
    // it, until the server cuts their connection (SHUTDOWN_GRACE_MS): answering them with an
    // error would invite a retry, and a second charge, for a job that is going to finish.
  }

  /**
   * Refunds running jobs whose heartbeat stopped `staleAfterMs` ago (their instance is
   * gone), and jobs that waited in line longer than the queue's deadline. Returns how many.
   * Both are judged on the database's clock, which stamped the rows, never on this
   * instance's; `at` names the moment on that clock (tests), the database's now by default.
   */
  async reconcile(staleAfterMs: number = LIVENESS.staleAfterMs, at?: Date): Promise<number> {
    let refunded = 0;
    for (const job of await repo.findStaleRunning(this.db, staleAfterMs, 100)) {
      if (await this.failAndRefund(job, ABANDONED, { staleAfterMs }, 'refunded')) refunded += 1;
    }
    const waited = { ms: this.options.queueTimeoutMs, at };
    for (const job of await repo.findExpiredQueued(this.db, waited.ms, 100, at)) {
      if (await this.failAndRefund(job, EXPIRED, { waitedLongerThan: waited }, 'refunded')) refunded += 1;
    }
    return refunded;
  }

  /** Wakes this instance's workers and every other instance's. */
  private poke(): void {
    this.pump();
    this.events.bus.publish('jobs', 'line').catch((error) => this.log(error, 'line poke'));
  }

  /** Claims jobs while this instance has room and the line has work for a free slot. */
  private pump(): void {
    if (!this.started || this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    const loop = async () => {
      do {
        this.pumpAgain = false;
        while (!this.stopping && this.running.size < this.options.perInstance) {
          const job = await repo.claimNext(this.db, this.instanceId, this.options.slots);
          if (!job) break;
          if (this.stopping) {
            // Claimed while this instance began to stop: another instance is to run it.
            await repo.unclaimJob(this.db, job.id, this.instanceId);
            this.events.bus.publish('jobs', 'line').catch((error) => this.log(error, 'line poke'));
            break;
          }
          this.execute(job);
        }
      } while (this.pumpAgain && !this.stopping);
    };
    this.pumpLoop = loop()
      .catch((error) => this.log(error, 'claiming a job failed'))
      .finally(() => {
        this.pumping = false;
      });
  }

  private execute(job: repo.JobRow): void {
    const controller = new AbortController();
    const done = this.run(job, controller)
      .catch((error) => this.log(error, 'a job failed outside its own handling'))
      .finally(() => {
        this.running.delete(job.id);
        this.release(job.id);
        // A slot is free, here and in the lane.
        this.poke();
      });
    this.running.add(job.id, { controller, done });
  }

  private async run(job: repo.JobRow, controller: AbortController): Promise<void> {
    const handler = this.handlers.get(job.kind);
    const count = job.kind === 'portrait' ? countPortrait : countGeneration;
    // Not awaited: the provider call starts in the order jobs were claimed (the events of
    // one job still leave in order: announce chains them).
    void this.announce(job.id, 'running');
    if (!handler || job.input === null) {
      // A request from before jobs were durable, or a kind this instance does not know.
      await this.failAndRefund(job, { code: 'INTERNAL', message: 'The job could not be run' });
      return;
    }
    const stopBeating = keepAlive(
      async () => {
        const beat = await repo.beatJob(this.db, job.id);
        if (beat?.cancelRequested) controller.abort(new AppError('JOB_CANCELLED'));
      },
      (error) => this.log(error, 'job heartbeat failed'),
    );
    try {
      const outcome = await this.finish(job, handler, controller.signal);
      count(job.model, outcome);
    } finally {
      stopBeating();
    }
  }

  private async finish(job: repo.JobRow, handler: JobHandler, signal: AbortSignal): Promise<'completed' | 'failed'> {
    let output: PaidJobOutput;
    try {
      if (job.cancelRequested) throw new AppError('JOB_CANCELLED');
      output = await handler.work(job, signal);
      // Cancelled (or shut down) while the answer was on its way: the user does not pay for it.
      if (stopped(signal)) throw signal.reason;
    } catch (error) {
      const failure = stopped(signal)
        ? settlement(signal.reason as AppError)
        : isCancel(error)
          ? CANCELLED
          : settlement(handler.failure(error, job));
      await this.failAndRefund(job, failure);
      return 'failed';
    }

    let stored: { fileName: string; fileSize: number };
    try {
      stored = await this.storage.save(output.bytes, output.mimeType);
    } catch (error) {
      // The store is unreachable or refused the write: the picture is lost, so is the charge.
      this.log(error, 'the image could not be stored');
      await this.failAndRefund(job, settlement(new AppError('STORAGE_UNAVAILABLE')));
      return 'failed';
    }
    try {
      const completed = await repo.completeJob(this.db, job.id, {
        ...handler.image(job, output),
        userId: job.userId,
        fileName: stored.fileName,
        fileSize: stored.fileSize,
        thumbnailFileName: null,
      });
      if (!completed) {
        // A cancel or the reconciler settled it (and refunded it) meanwhile.
        await this.storage.remove(stored.fileName).catch(() => undefined);
        return 'failed';
      }
      countJobFinished(job.lane, 'completed');
      this.thumbnails.add(completed.image.id, output.bytes);
      await this.announce(job.id);
      return 'completed';
    } catch (error) {
      // A file the store cannot remove now is left for the orphan sweep.
      await this.storage.remove(stored.fileName).catch(() => undefined);
      const appError = isAppError(error)
        ? error
        : new AppError('PROVIDER_ERROR', handler.storeFailureMessage(job), { cause: error });
      await this.failAndRefund(job, settlement(appError));
      return 'failed';
    }
  }

  /**
   * FAILED and the refund in one transaction, only if the job was still PENDING (and `only`
   * holds); counted as `outcome` when this call settled it (a cancel's code says cancelled).
   */
  private async failAndRefund(
    job: Pick<repo.JobRow, 'id' | 'userId' | 'cost' | 'lane'>,
    failure: repo.Settlement,
    only: Parameters<typeof repo.failJob>[3] = {},
    outcome: Exclude<JobOutcome, 'completed'> = failure.code === CANCELLED.code ? 'cancelled' : 'failed',
  ): Promise<boolean> {
    const settled = await this.ledger.transaction(async (tx) => {
      const row = await repo.failJob(tx, job.id, failure, only);
      if (!row) return false;
      countTokensRefunded('generation_refund', job.cost);
      await this.ledger.credit(
        {
          userId: job.userId,
          amount: job.cost,
          reason: 'generation_refund',
          reference: `generation_request:${job.id}`,
          idempotencyKey: `generation:${job.id}:refund`,
        },
        tx,
      );
      return true;
    });
    if (settled) {
      countJobFinished(job.lane, outcome);
      await this.announce(job.id);
      this.release(job.id);
    }
    return settled;
  }

  /** Tells this instance's waiters of the job to look again. */
  private release(id: number): void {
    for (const done of [...(this.waiters.get(id) ?? [])]) done();
  }

  /**
   * The job as an event in its owner's log, after the job's earlier announcements. A failure
   * to log is not the job's failure. `as` is the state the job entered, announced as such even
   * if the job moved on before the row was read (claimed before its creation was announced,
   * finished before its start was): each move is told once, in order, and its later ones
   * by their own announcements.
   */
  private announce(id: number, as?: 'queued' | 'running'): Promise<void> {
    const next = (this.announcing.get(id) ?? Promise.resolve()).then(() => this.announceNow(id, as));
    this.announcing.set(id, next);
    void next.finally(() => {
      if (this.announcing.get(id) === next) this.announcing.delete(id);
    });
    return next;
  }

  private async announceNow(id: number, as?: 'queued' | 'running'): Promise<void> {
    try {
      const found = await repo.findJob(this.db, id);
      if (!found) return;
      const row = as === undefined || stateOf(found) === as ? found : asEntered(found, as);
      const image = row.status === 'COMPLETED' ? await repo.imageOfJob(this.db, id) : undefined;
      const job = await this.toJob(row, image);
      const balance = await repo.balanceNow(this.db, row.userId);
      await this.events.append(row.userId, STREAM_EVENTS.job, { job, balance });
    } catch (error) {
      this.log(error, 'job event not stored');
    }
  }

  private async current(userId: number, id: number): Promise<{ job: Job; balance: number }> {
    const row = await repo.findOwnedJob(this.db, userId, id);
    if (!row) throw new AppError('NOT_FOUND');
    const image = row.status === 'COMPLETED' ? await repo.imageOfJob(this.db, id) : undefined;
    return { job: await this.toJob(row, image), balance: await repo.balanceNow(this.db, userId) };
  }

  private async meanRunMs(lane: repo.Lane): Promise<number> {
    const cached = this.meanRun.get(lane);
    if (cached && Date.now() - cached.at < 10_000) return cached.ms;
    const ms = (await repo.meanRunMs(this.db, lane, 50)) ?? DEFAULT_RUN_MS[lane];
    this.meanRun.set(lane, { ms, at: Date.now() });
    return ms;
  }

  private async toJob(row: repo.JobRow, image: ImageRow | undefined, now = new Date()): Promise<Job> {
    const state = stateOf(row);
    let position: number | null = null;
    let etaSeconds: number | null = null;
    let progress = state === 'queued' ? 0 : 1;
    if (state === 'queued' || state === 'running') {
      const mean = await this.meanRunMs(row.lane);
      if (state === 'queued') {
        position = await repo.placeInLine(this.db, row.lane, row.createdAt, row.id);
        const rounds = Math.ceil(position / Math.max(1, this.options.slots[row.lane]));
        etaSeconds = Math.round((rounds * mean) / 1000);
      } else {
        const elapsed = now.getTime() - (row.startedAt ?? row.createdAt).getTime();
        etaSeconds = Math.max(0, Math.round((mean - elapsed) / 1000));
        progress = Math.min(0.95, Math.max(0, elapsed / mean));
      }
    }
    const appUrl = this.options.appUrl;
    return {
      id: row.id,
      kind: row.kind,
      model: row.model,
      prompt: row.prompt,
      state,
      cost: row.cost,
      position,
      etaSeconds,
      progress,
      createdAt: row.createdAt.toISOString(),
      startedAt: row.startedAt?.toISOString() ?? null,
      finishedAt: row.finishedAt?.toISOString() ?? null,
      error:
        row.status === 'FAILED'
          ? { code: row.errorCode ?? 'PROVIDER_ERROR', message: row.errorMessage ?? 'Generation failed' }
          : null,
      image: image
        ? {
            id: image.id,
            url: `${appUrl}/images/${image.fileName}`,
            thumbnailUrl: `${appUrl}/images/${image.thumbnailFileName ?? image.fileName}`,
          }
        : null,
    };
  }
}

function stateOf(row: repo.JobRow): JobState {
  if (row.status === 'COMPLETED') return 'completed';
  if (row.status === 'FAILED') return row.errorCode === 'JOB_CANCELLED' ? 'cancelled' : 'failed';
  return row.startedAt === null ? 'queued' : 'running';
}

/** The row as it was when the job entered `state`: in line, or just started. */
function asEntered(row: repo.JobRow, state: 'queued' | 'running'): repo.JobRow {
  return {
    ...row,
    status: 'PENDING',
    startedAt: state === 'queued' ? null : (row.startedAt ?? row.createdAt),
    finishedAt: null,
    errorCode: null,
    errorMessage: null,
  };
}

/** Stopped by us: a cancel or a shutdown (a provider's own abort is its failure). */
function stopped(signal: AbortSignal): boolean {
  return signal.aborted && isAppError(signal.reason);
}

function isCancel(value: unknown): value is AppError {
  return isAppError(value) && value.code === 'JOB_CANCELLED';
}

function settlement(error: AppError): repo.Settlement {
  return { code: error.code, message: error.message, details: error.details ?? null };
}
