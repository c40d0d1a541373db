import {
  firstIssue,
  firstIssueMessage,
  formatImageSize,
  IMAGE_MODELS,
  type GenerationBody,
  type ImageModelId,
} from '../../src/domain/images';
import type { z } from 'zod';
import { insufficientTokensMessage } from '../../src/domain/errors';
import { issueErrorCode } from '../../src/domain/text';
import {
  GENERATION_SUCCESS_MESSAGE,
  paginationOf,
  type GenerationReply,
  type ImagePage,
  type ImageRecord,
} from '../../src/domain/image-record';
import type { Db } from '../db/client';
import { AppError } from '../errors';
import { withDeadline } from '../jobs/paid-job';
import { JobQueue, type JobHandler } from '../jobs/queue';
import { imageProviderErrorToAppError } from '../providers/images/app-error';
import { ImageProviderError, type ImageJob, type ImageProvider, type ImageResult } from '../providers/images/types';
import { jobPixelSize, V2BETA_SEED_MAX } from '../providers/images/job';
import { stabilityErrorKind } from '../providers/images/stability';
import { countProviderError } from '../metrics';
import { LIVENESS } from '../background/liveness';
import * as repo from './repository';
import type { ImageStorage } from './storage';

// SDXL v1 settings the Stability adapter sends for original (not user-visible in SPEC).
const ORIGINAL_STEPS = 30;
const ORIGINAL_CFG_SCALE = 7;

/**
 * SPEC's top seed (4294967295, which v1 SDXL, original, takes whole) is sent to the v2beta
 * endpoints as their top one, so a seed the form allows is never charged only to be
 * refused; the image records the seed used.
 */
function providerSeed(model: ImageModelId, seed: number | undefined): number | undefined {
  if (seed === undefined || model === 'original') return seed;
  return Math.min(seed, V2BETA_SEED_MAX);
}

/**
 * A file is written after the provider answered and recorded in the very next statement,
 * so a file without a row this old was left by a crash. Well past any statement's wait.
 */
export const ORPHAN_FILE_MIN_AGE_MS = 60 * 60_000;

export interface ImageServiceOptions {
  /** The public origin; image addresses are this plus /images/{fileName}. */
  appUrl: string;
  /** Upper bound of one provider call, whatever the provider does itself. */
  providerTimeoutMs: number;
}

/**
 * Text-to-image generation paid from the ledger (DESIGN section 5 "Generation"), run as
 * a paid job (server/jobs/paid-job.ts): one statement to charge, the provider call bounded
 * by a timeout, one statement to complete, or FAILED and the refund. The request's
 * heartbeat is kept fresh while it runs, so the reconciler refunds only work whose owner
 * stopped; a file whose row never came is swept (sweepOrphanFiles).
 */
export class ImageService {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobQueue,
    private readonly provider: ImageProvider,
    private readonly storage: ImageStorage,
    private readonly options: ImageServiceOptions,
  ) {
    jobs.register('generation', this.handler());
  }

  /**
   * The runner of generation jobs (server/jobs/queue.ts): the provider call from the job's
   * stored input, bounded by the provider timeout and stopped by a cancel.
   */
  private handler(): JobHandler<ImageResult> {
    return {
      lane: 'images',
      work: async (row, stop) => {
        const job = row.input as ImageJob;
        const result = await this.callProvider(job, stop);
        if (result.finishReason === 'CONTENT_FILTERED') {
          // Stability refused the picture it made: counted with the prompts it refuses (403).
          if (this.provider.name === 'stability') countProviderError('stability', 'refused');
          // The provider delivers a blurred picture: not what was paid for, so it is refunded.
          throw new AppError('CONTENT_FILTERED', undefined, { details: { finishReason: 'CONTENT_FILTERED' } });
        }
        return result;
      },
      failure: (error, row) => imageProviderErrorToAppError(error, row.model as ImageModelId),
      image: (row, result) => {
        const job = row.input as ImageJob;
        const model = job.model;
        return {
          originalName: null,
          prompt: job.prompt,
          width: result.width,
          height: result.height,
          steps: model === 'original' ? ORIGINAL_STEPS : null,
          cfgScale: model === 'original' ? ORIGINAL_CFG_SCALE : null,
          stylePreset: job.stylePreset ?? null,
          size: formatImageSize(result),
          mimeType: result.mimeType,
          seed: result.seed,
          model,
          finishReason: result.finishReason,
          negativePrompt: job.negativePrompt ?? null,
          aspectRatio: job.aspectRatio ?? null,
          modelVariant: model === 'sd3' ? (job.sd3Model ?? null) : null,
        };
      },
      storeFailureMessage: (row) => IMAGE_MODELS[row.model as ImageModelId].failureMessage,
    };
  }

  /**
   * SPEC's generation endpoint: the job is charged and stored, then this waits for it,
   * whichever instance runs it; a client that leaves does not cancel it (it goes on in the
   * user's queue).
   */
  async generate(userId: number, model: ImageModelId, body: GenerationBody): Promise<GenerationReply> {
    const id = await this.submit(userId, model, body);
    const settled = await this.jobs.wait(userId, id);
    if (settled.job.status !== 'COMPLETED' || !settled.image) throw JobQueue.failureOf(settled.job);
    return {
      success: true,
      data: this.toRecord(settled.image),
      tokens: { charged: settled.job.cost },
      balanceAfter: settled.balance,
      message: GENERATION_SUCCESS_MESSAGE,
    };
  }

  /** Charges and queues a generation; returns the job's id. */
  async submit(userId: number, model: ImageModelId, body: GenerationBody): Promise<number> {
    const job = toJob(model, body);
    const cost = IMAGE_MODELS[model].cost;
    const size = this.requestedSize(job);
    return this.jobs.submit({
      kind: 'generation',
      userId,
      cost,
      input: job,
      request: {
        model,
        prompt: job.prompt,
        negativePrompt: job.negativePrompt ?? null,
        width: size.width,
        height: size.height,
        // generation_requests.steps is required; the v2beta models have no step count.
        steps: model === 'original' ? ORIGINAL_STEPS : 0,
        cfgScale: model === 'original' ? ORIGINAL_CFG_SCALE : null,
        stylePreset: job.stylePreset ?? null,
        samples: 1,
      },
      insufficient: (balance) =>
        new AppError('INSUFFICIENT_TOKENS', insufficientTokensMessage(cost, balance), {
          details: { balance, cost },
        }),
    });
  }

  /** A page of the user's images, newest first; with `search`, only prompts containing it. */
  async listImages(userId: number, page: number, limit: number, search?: string): Promise<ImagePage> {
    const offset = (page - 1) * limit;
    const { rows, total } =
      search === undefined
        ? await repo.imagePage(this.db, userId, limit, offset)
        : await repo.searchImages(this.db, userId, limit, offset, search);
    return { images: rows.map((row) => this.toRecord(row)), pagination: paginationOf(page, limit, total) };
  }

  /**
   * Deletes the user's image: the row first (so it is never listed without its file),
   * then the file and the thumbnail. Another user's id and a repeated delete are both
   * NOT_FOUND, so the reply never says whether someone else's image exists.
   */
  async deleteImage(userId: number, id: number): Promise<void> {
    const deleted = await repo.deleteImage(this.db, userId, id);
    if (!deleted) throw new AppError('NOT_FOUND');
    await this.storage.remove(deleted.fileName);
    if (deleted.thumbnailFileName) await this.storage.remove(deleted.thumbnailFileName);
  }

  /**
   * Refunds PENDING requests whose heartbeat stopped: their request handler is gone (a
   * crash or a restart). Live ones, on any instance, keep beating and are left alone.
   * Returns how many were refunded.
   */
  async reconcile(staleAfterMs: number = LIVENESS.staleAfterMs): Promise<number> {
    return this.jobs.reconcile(staleAfterMs);
  }

  /**
   * Removes stored files that no row refers to and that are older than `minAgeMs`: a
   * crash between writing an image and recording it. The file's name was never handed
   * to anyone, and the age leaves any write still on its way to its row alone. Returns
   * how many were removed.
   */
  async sweepOrphanFiles(minAgeMs: number = ORPHAN_FILE_MIN_AGE_MS, now: Date = new Date()): Promise<number> {
    const cutoff = now.getTime() - minAgeMs;
    let removed = 0;
    let batch: string[] = [];
    const flush = async () => {
      const referenced = await repo.referencedFileNames(this.db, batch);
      for (const fileName of batch) {
        if (referenced.has(fileName)) continue;
        await this.storage.remove(fileName);
        removed += 1;
      }
      batch = [];
    };
    for await (const file of this.storage.list()) {
      if (file.modifiedAt.getTime() > cutoff) continue;
      batch.push(file.fileName);
      if (batch.length >= 500) await flush();
    }
    await flush();
    return removed;
  }

  private async callProvider(job: ImageJob, stop?: AbortSignal): Promise<ImageResult> {
    const timeoutMs = this.options.providerTimeoutMs;
    const timeout = (cause?: unknown) =>
      new ImageProviderError('timeout', `The image provider did not answer within ${timeoutMs} ms`, { cause });
    try {
      return await withDeadline(
        timeoutMs,
        (signal) => this.provider.generate({ ...job, signal }),
        timeout,
        (error) => error instanceof ImageProviderError,
        stop,
      );
    } catch (error) {
      // Counted here, once per call, whichever deadline fired first: the adapter's own or
      // this one (which aborts the adapter, whose abort is then not a failure of its own).
      if (this.provider.name === 'stability' && error instanceof ImageProviderError) {
        countProviderError('stability', stabilityErrorKind(error));
      }
      throw error;
    }
  }

  private requestedSize(job: ImageJob): { width: number; height: number } {
    if (job.width !== undefined && job.height !== undefined) return { width: job.width, height: job.height };
    return jobPixelSize(job);
  }

  toRecord(row: repo.ImageRow): ImageRecord {
    return {
      id: row.id,
      fileName: row.fileName,
      originalName: row.originalName,
      imageUrl: `${this.options.appUrl}/images/${row.fileName}`,
      prompt: row.prompt,
      width: row.width,
      height: row.height,
      steps: row.steps,
      cfgScale: row.cfgScale,
      stylePreset: row.stylePreset,
      size: row.size,
      fileSize: row.fileSize,
      mimeType: row.mimeType,
      userId: row.userId,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      seed: row.seed,
      model: row.model,
      finish_reason: row.finishReason,
      negativePrompt: row.negativePrompt,
      aspectRatio: row.aspectRatio,
      modelVariant: row.modelVariant,
      thumbnailUrl: `${this.options.appUrl}/images/${row.thumbnailFileName ?? row.fileName}`,
    };
  }
}

/**
 * A body that breaks SPEC section 5's rules, as the refusal of the first broken rule in
 * SPEC's order (not zod's): the route's validator answers with it (server/images/routes.ts).
 */
export function generationRefusal(error: { readonly issues: readonly z.core.$ZodIssue[] }): AppError {
  const issue = firstIssue(error);
  const code = issueErrorCode(issue) === 'INVALID_TEXT' ? 'INVALID_TEXT' : 'VALIDATION_ERROR';
  return new AppError(code, issue?.message ?? firstIssueMessage(error), {
    ...(issue && code === 'INVALID_TEXT' ? { details: { field: issue.path.join('.') } } : {}),
  });
}

/** A validated body as the job to run. */
function toJob(model: ImageModelId, body: GenerationBody): ImageJob {
  const info = IMAGE_MODELS[model];
  const data = body as Record<string, unknown>;
  const optionalText = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
  return {
    model,
    prompt: body.prompt,
    negativePrompt: optionalText(data.negative_prompt),
    seed: providerSeed(model, typeof data.seed === 'number' ? data.seed : undefined),
    width: typeof data.width === 'number' ? data.width : undefined,
    height: typeof data.height === 'number' ? data.height : undefined,
    aspectRatio: optionalText(data.aspect_ratio),
    // 'none' is the form's way of saying no preset.
    stylePreset: info.hasStylePresets && data.style_preset !== 'none' ? optionalText(data.style_preset) : undefined,
    sd3Model: optionalText(data.model),
    outputFormat: info.defaultOutputFormat,
  };
}
