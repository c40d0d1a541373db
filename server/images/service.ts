import {
  firstIssueMessage,
  formatImageSize,
  generationBodySchemas,
  IMAGE_MODELS,
  type ImageModelId,
} from '../../src/domain/images';
import { insufficientTokensMessage } from '../../src/domain/errors';
import {
  GENERATION_SUCCESS_MESSAGE,
  paginationOf,
  type GenerationReply,
  type ImagePage,
  type ImageRecord,
} from '../../src/domain/image-record';
import type { Db } from '../db/client';
import { AppError, isAppError } from '../errors';
import type { LedgerService } from '../ledger/service';
import { imageProviderErrorToAppError } from '../providers/images/app-error';
import { ImageProviderError, type ImageJob, type ImageProvider, type ImageResult } from '../providers/images/types';
import { jobPixelSize } from '../providers/images/job';
import * as repo from './repository';
import type { ImageStorage } from './storage';

// SDXL v1 settings the Stability adapter sends for original (not user-visible in SPEC).
const ORIGINAL_STEPS = 30;
const ORIGINAL_CFG_SCALE = 7;

export interface ImageServiceOptions {
  /** The public origin; image addresses are this plus /images/{fileName}. */
  appUrl: string;
  /** Upper bound of one provider call, whatever the provider does itself. */
  providerTimeoutMs: number;
  /** Extra age beyond the provider timeout before a PENDING request counts as abandoned. */
  reconcileGraceMs: number;
}

/**
 * Text-to-image generation paid from the ledger (DESIGN section 5 "Generation"):
 *
 * 1. one atomic statement: the charge, the PENDING request row and its ledger row;
 * 2. the provider call, outside any transaction, bounded by a timeout;
 * 3. the file is written, then one atomic statement: COMPLETED and the image row;
 *    or, on any failure, one transaction: FAILED and the refund (the file removed).
 *
 * A crash between 1 and 3 leaves a PENDING row; the reconciler refunds it later.
 */
export class ImageService {
  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    private readonly provider: ImageProvider,
    private readonly storage: ImageStorage,
    private readonly options: ImageServiceOptions,
  ) {}

  async generate(userId: number, model: ImageModelId, body: unknown): Promise<GenerationReply> {
    const job = parseJob(model, body);
    const cost = IMAGE_MODELS[model].cost;
    const size = this.requestedSize(job);

    const opened = await repo.openRequest(this.db, {
      userId,
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
      cost,
    });
    if (opened.kind === 'refused') {
      throw new AppError('INSUFFICIENT_TOKENS', insufficientTokensMessage(cost, opened.balance), {
        details: { balance: opened.balance, cost },
      });
    }
    const request = opened.request;

    let result: ImageResult;
    try {
      result = await this.callProvider(job);
      if (result.finishReason === 'CONTENT_FILTERED') {
        // The provider delivers a blurred picture: not what was paid for, so it is refunded.
        throw new AppError('CONTENT_FILTERED', undefined, { details: { finishReason: 'CONTENT_FILTERED' } });
      }
    } catch (error) {
      const appError = imageProviderErrorToAppError(error, model);
      await this.failAndRefund(request, appError.message);
      throw appError;
    }

    const stored = await this.storage.save(result.bytes, result.mimeType);
    let image: repo.ImageRow;
    try {
      const completed = await repo.completeRequest(this.db, request.id, {
        userId,
        fileName: stored.fileName,
        originalName: null,
        prompt: job.prompt,
        width: result.width,
        height: result.height,
        steps: model === 'original' ? ORIGINAL_STEPS : null,
        cfgScale: model === 'original' ? ORIGINAL_CFG_SCALE : null,
        stylePreset: job.stylePreset ?? null,
        size: formatImageSize(result),
        fileSize: stored.fileSize,
        mimeType: result.mimeType,
        seed: result.seed,
        model,
        finishReason: result.finishReason,
      });
      // The reconciler gave up on this request (and refunded it) while we waited.
      if (!completed) throw new AppError('PROVIDER_TIMEOUT');
      image = completed;
    } catch (error) {
      await this.storage.remove(stored.fileName);
      const appError = isAppError(error)
        ? error
        : new AppError('PROVIDER_ERROR', IMAGE_MODELS[model].failureMessage, { cause: error });
      await this.failAndRefund(request, appError.message);
      throw appError;
    }

    return {
      success: true,
      data: this.toRecord(image),
      tokens: { charged: cost },
      message: GENERATION_SUCCESS_MESSAGE,
    };
  }

  async listImages(userId: number, page: number, limit: number): Promise<ImagePage> {
    const [rows, total] = await Promise.all([
      repo.listImages(this.db, userId, limit, (page - 1) * limit),
      repo.countImages(this.db, userId),
    ]);
    return { images: rows.map((row) => this.toRecord(row)), pagination: paginationOf(page, limit, total) };
  }

  /**
   * Refunds PENDING requests older than the provider timeout plus a grace period: their
   * request handler is gone (a crash or a restart). Returns how many were refunded.
   */
  async reconcile(now: Date = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.options.providerTimeoutMs - this.options.reconcileGraceMs);
    const stale = await repo.findStalePending(this.db, cutoff, 100);
    let refunded = 0;
    for (const request of stale) {
      if (await this.failAndRefund(request, 'Generation was abandoned and refunded')) refunded += 1;
    }
    return refunded;
  }

  private async failAndRefund(request: repo.OpenedRequest, message: string): Promise<boolean> {
    return this.ledger.transaction(async (tx) => {
      const settled = await repo.settlePendingRequest(tx, request.id, 'FAILED', message);
      if (!settled) return false;
      await this.ledger.credit(
        {
          userId: request.userId,
          amount: request.cost,
          reason: 'generation_refund',
          reference: referenceOf(request.id),
          idempotencyKey: `generation:${request.id}:refund`,
        },
        tx,
      );
      return true;
    });
  }

  private async callProvider(job: ImageJob): Promise<ImageResult> {
    const timeoutMs = this.options.providerTimeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    let onAbort: (() => void) | undefined;
    const deadline = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(new ImageProviderError('timeout', `The image provider did not answer within ${timeoutMs} ms`));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      // The race bounds providers that ignore the signal (the offline renderer cannot stop).
      return await Promise.race([this.provider.generate({ ...job, signal }), deadline]);
    } catch (error) {
      if (signal.aborted && !(error instanceof ImageProviderError)) {
        throw new ImageProviderError('timeout', `The image provider did not answer within ${timeoutMs} ms`, {
          cause: error,
        });
      }
      throw error;
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
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
    };
  }
}

function referenceOf(requestId: number): string {
  return `generation_request:${requestId}`;
}

/** SPEC section 5's rules on the wire body, the first failure in SPEC's order. */
export function parseJob(model: ImageModelId, body: unknown): ImageJob {
  const info = IMAGE_MODELS[model];
  const parsed = generationBodySchemas[model].safeParse(body);
  if (!parsed.success) throw new AppError('VALIDATION_ERROR', firstIssueMessage(parsed.error));
  const data = parsed.data as Record<string, unknown>;
  const optionalText = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
  return {
    model,
    prompt: parsed.data.prompt,
    negativePrompt: optionalText(data.negative_prompt),
    seed: typeof data.seed === 'number' ? data.seed : undefined,
    width: typeof data.width === 'number' ? data.width : undefined,
    height: typeof data.height === 'number' ? data.height : undefined,
    aspectRatio: optionalText(data.aspect_ratio),
    // 'none' is the form's way of saying no preset.
    stylePreset: info.hasStylePresets && data.style_preset !== 'none' ? optionalText(data.style_preset) : undefined,
    sd3Model: optionalText(data.model),
    outputFormat: info.defaultOutputFormat,
  };
}
