import type { Db } from '../db/client';
import { AppError, isAppError } from '../errors';
import * as repo from '../images/repository';
import type { ImageStorage } from '../images/storage';
import type { Thumbnails } from '../images/thumbnails';
import type { LedgerService } from '../ledger/service';
import type { ImageMimeType } from '../providers/images/types';
import { countGeneration, countPortrait, countTokensCharged, countTokensRefunded } from '../metrics';
import { keepAlive, LIVENESS } from './liveness';

/** The generation_requests row of a job, apart from what the runner fills in itself. */
export type PaidJobRequest = Omit<
  repo.NewGenerationRequest,
  'id' | 'userId' | 'cost' | 'status' | 'errorMessage' | 'createdAt' | 'updatedAt'
>;

/** The images row of a finished job, apart from the owner and the stored file. */
export type PaidJobImage = Omit<
  repo.NewImage,
  'id' | 'userId' | 'generationRequestId' | 'fileName' | 'fileSize' | 'thumbnailFileName' | 'createdAt' | 'updatedAt'
>;

/** What a job's work hands back: the picture to store. */
export interface PaidJobOutput {
  bytes: Buffer;
  mimeType: ImageMimeType;
}

export interface PaidJobResult {
  image: repo.ImageRow;
  balanceAfter: number;
}

export interface PaidJob<T extends PaidJobOutput> {
  /** Which feature's counters (/metrics) the outcome goes to. */
  kind: 'generation' | 'portrait';
  userId: number;
  cost: number;
  request: PaidJobRequest;
  /** The refusal when the balance does not cover the cost (nothing was written). */
  insufficient(balance: number): AppError;
  /** The paid work (a provider call), run outside any transaction. */
  work(): Promise<T>;
  /** What the user hears when the work failed; the charge is refunded either way. */
  failure(error: unknown): AppError;
  /** The image row for the work's output. */
  image(output: T): PaidJobImage;
  /** The user's text for a failure while storing the result. */
  storeFailureMessage: string;
}

/**
 * A paid job that ends in a stored image (DESIGN section 5 "Generation"), shared by image
 * generation and portraits:
 *
 * 1. one atomic statement: the charge, the PENDING request row and its ledger row;
 * 2. the work (the provider call), outside any transaction;
 * 3. the file is written, then one atomic statement: COMPLETED and the image row; or, on
 *    any failure, one transaction: FAILED and the refund (the file removed). The list
 *    thumbnail is made after the answer (server/images/thumbnails.ts).
 *
 * While 2 and 3 run, the request's heartbeat is kept fresh (server/jobs/liveness.ts), so no
 * instance's reconciler takes live work for abandoned. A crash between 1 and 3 leaves a
 * PENDING row whose heartbeat stops; {@link PaidJobs.reconcile} refunds it later. A file
 * written by 3 whose row never came is swept by ImageService.sweepOrphanFiles.
 */
export class PaidJobs {
  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    private readonly storage: ImageStorage,
    private readonly thumbnails: Thumbnails,
    /** Where a failed heartbeat is reported. */
    private readonly log: (error: unknown) => void = () => {},
  ) {}

  /**
   * Runs the job; resolves with the stored image and the user's balance once it is paid
   * for (a paid reply states it, so every screen shows the server's figure).
   */
  async run<T extends PaidJobOutput>(job: PaidJob<T>): Promise<PaidJobResult> {
    const opened = await repo.openRequest(this.db, { ...job.request, userId: job.userId, cost: job.cost });
    const count = job.kind === 'portrait' ? countPortrait : countGeneration;
    if (opened.kind === 'refused') {
      count(job.request.model, 'refused');
      throw job.insufficient(opened.balance);
    }
    const request = opened.request;
    countTokensCharged(`${job.kind}_charge`, job.cost);
    const stopBeating = keepAlive(() => repo.beatRequest(this.db, request.id), this.log);
    try {
      const done = await this.finish(job, request);
      count(job.request.model, 'completed');
      return done;
    } catch (error) {
      count(job.request.model, 'failed');
      throw error;
    } finally {
      stopBeating();
    }
  }

  private async finish<T extends PaidJobOutput>(job: PaidJob<T>, request: repo.OpenedRequest): Promise<PaidJobResult> {
    let output: T;
    try {
      output = await job.work();
    } catch (error) {
      const appError = job.failure(error);
      await this.failAndRefund(request, appError.message);
      throw appError;
    }

    let stored: { fileName: string; fileSize: number };
    try {
      stored = await this.storage.save(output.bytes, output.mimeType);
    } catch (error) {
      // The store is unreachable or refused the write: the picture is lost, so is the charge.
      await this.failAndRefund(request, `The image could not be stored: ${(error as Error).message}`);
      throw new AppError('STORAGE_UNAVAILABLE', undefined, { cause: error });
    }
    try {
      const completed = await repo.completeRequest(this.db, request.id, {
        ...job.image(output),
        userId: job.userId,
        fileName: stored.fileName,
        fileSize: stored.fileSize,
        thumbnailFileName: null,
      });
      // The reconciler gave up on this request (and refunded it) while we waited.
      if (!completed) throw new AppError('PROVIDER_TIMEOUT');
      this.thumbnails.add(completed.image.id, output.bytes);
      return { image: completed.image, balanceAfter: completed.balance };
    } catch (error) {
      // A file the store cannot remove now is left for the orphan sweep.
      await this.storage.remove(stored.fileName).catch(() => undefined);
      const appError = isAppError(error)
        ? error
        : new AppError('PROVIDER_ERROR', job.storeFailureMessage, { cause: error });
      await this.failAndRefund(request, appError.message);
      throw appError;
    }
  }

  /**
   * Refunds PENDING requests whose heartbeat stopped `staleAfterMs` ago (their handler is
   * gone: a crash or a restart), whatever the job; live ones, on any instance, keep
   * beating and are left alone. Returns how many were refunded.
   */
  async reconcile(staleAfterMs: number = LIVENESS.staleAfterMs): Promise<number> {
    const stale = await repo.findStalePending(this.db, staleAfterMs, 100);
    let refunded = 0;
    for (const request of stale) {
      if (await this.failAndRefund(request, 'Generation was abandoned and refunded', staleAfterMs)) refunded += 1;
    }
    return refunded;
  }

  private async failAndRefund(request: repo.OpenedRequest, message: string, onlyIfStaleMs?: number): Promise<boolean> {
    return this.ledger.transaction(async (tx) => {
      const settled = await repo.settlePendingRequest(tx, request.id, 'FAILED', message, onlyIfStaleMs);
      if (!settled) return false;
      countTokensRefunded('generation_refund', request.cost);
      await this.ledger.credit(
        {
          userId: request.userId,
          amount: request.cost,
          reason: 'generation_refund',
          reference: `generation_request:${request.id}`,
          idempotencyKey: `generation:${request.id}:refund`,
        },
        tx,
      );
      return true;
    });
  }
}

/**
 * Runs `call` with an abort signal that fires after `timeoutMs`, and gives up at that
 * moment even when the call ignores the signal (an offline engine cannot stop). Either way
 * the caller gets `timeoutError()`.
 */
export async function withDeadline<T>(
  timeoutMs: number,
  call: (signal: AbortSignal) => Promise<T>,
  timeoutError: (cause?: unknown) => Error,
  isProviderError: (error: unknown) => boolean,
): Promise<T> {
  const signal = AbortSignal.timeout(timeoutMs);
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<never>((_, reject) => {
    onAbort = () => reject(timeoutError());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([call(signal), deadline]);
  } catch (error) {
    if (signal.aborted && !isProviderError(error)) throw timeoutError(error);
    throw error;
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
