import type { z } from 'zod';
import { generatePortraitEndpoint } from '../../src/domain/api/portraits';
import { formatImageSize, PROMPT_MAX_LENGTH } from '../../src/domain/images';
import {
  DEFAULT_PORTRAIT_ASPECT_RATIO,
  firstPortraitIssue,
  PORTRAIT_COST,
  PORTRAIT_MODEL,
  PORTRAIT_MODEL_LABEL,
  portraitMessages,
  type PortraitAspectRatio,
  type PortraitFormFields,
  type PortraitOutputFormat,
  type PortraitReply,
} from '../../src/domain/portraits';
import { issueErrorCode, textLength } from '../../src/domain/text';
import type { Db } from '../db/client';
import { AppError } from '../errors';
import { IMAGE_FILE_NAME, readStoredFile, type ImageStorage } from '../images/storage';
import { withDeadline } from '../jobs/paid-job';
import { JobQueue, type JobHandler } from '../jobs/queue';
import { countPortrait } from '../metrics';
import { portraitPixelSize } from '../providers/portraits/offline';
import { PortraitProviderError, type PortraitProvider, type PortraitResult } from '../providers/portraits/types';
import { checkUploadBytes, decodeUpload } from '../uploads/image-upload';
import type { SpooledFile } from '../uploads/spool';
import { portraitProviderErrorToAppError } from './app-error';
import * as repo from './repository';

/** The multipart request as read off the wire (routes.ts), not yet checked. */
export interface PortraitForm {
  fields: Partial<Record<string, string>>;
  /** The uploaded photo, spooled to a temporary file (its first 10MB; `size` counts all). */
  file?: SpooledFile & { fileName: string };
}

export interface PortraitServiceOptions {
  appUrl: string;
  /** Upper bound of one provider call (the adapter cancels its own work a little earlier). */
  providerTimeoutMs: number;
}

/** Lets the Replicate adapter cancel its prediction before our own deadline strikes. */
const DEADLINE_MARGIN_MS = 5000;

/**
 * Portraits (SPEC sections 2, 5, 7): the checks in SPEC's order, the photo decoded and
 * re-encoded before anything else sees it, then a paid job like image generation: one
 * statement charges 12 tokens with the PENDING job, one completes it with the image row,
 * any failure refunds (server/jobs/queue.ts). The decoded photo is kept on the job's row
 * only while it is PENDING: settling the job erases it (migration 0009).
 */
export class PortraitService {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobQueue,
    private readonly provider: PortraitProvider,
    private readonly storage: ImageStorage,
    private readonly options: PortraitServiceOptions,
  ) {
    jobs.register('portrait', this.handler());
  }

  /**
   * `user.tokensAmount` is the balance as the session check read it at this request's
   * start (as the chat's check uses it); the charge itself re-checks atomically.
   * `stop` aborts when nobody waits for the answer any more (the client went away): before
   * the charge nothing is charged; after it the job goes on in the user's queue.
   */
  async create(
    user: { id: number; tokensAmount: number },
    form: PortraitForm,
    stop?: AbortSignal,
  ): Promise<PortraitReply> {
    return this.make(user, form, stop);
  }

  private async make(
    user: { id: number; tokensAmount: number },
    form: PortraitForm,
    stop: AbortSignal | undefined,
  ): Promise<PortraitReply> {
    const userId = user.id;
    const request = parseForm(form, this.options.appUrl);

    // Cheap checks of the photo before the balance, like the browser does on choosing it.
    if (request.photo.kind === 'upload') checkUploadBytes(request.photo.file.head, request.photo.file.size);
    const owned = request.photo.kind === 'reference' ? await this.ownedImage(userId, request.photo) : undefined;

    // SPEC's third rule, before the costly decode; counted as the queue counts its refusals.
    if (user.tokensAmount < PORTRAIT_COST) {
      countPortrait(PORTRAIT_MODEL, 'refused');
      throw insufficient(user.tokensAmount);
    }

    const source = owned ? await this.readStored(owned.fileName) : (request.photo as PhotoUpload).file;
    const photo = await decodeUpload(source);

    // Nobody is waiting any more: nothing is charged.
    if (stop?.aborted) throw new AppError('SERVICE_UNAVAILABLE', undefined, { cause: stop.reason });

    const target = portraitPixelSize(request.aspectRatio);
    const input: PortraitInput = {
      prompt: request.prompt,
      aspectRatio: request.aspectRatio,
      stylePreset: request.stylePreset,
      outputFormat: request.outputFormat,
      photo: { mimeType: photo.mimeType, width: photo.width, height: photo.height },
    };
    const id = await this.jobs.submit({
      kind: 'portrait',
      userId,
      cost: PORTRAIT_COST,
      input,
      photo: photo.bytes,
      request: {
        model: PORTRAIT_MODEL,
        prompt: request.prompt,
        negativePrompt: null,
        width: target.width,
        height: target.height,
        steps: 0,
        cfgScale: null,
        stylePreset: request.stylePreset ?? null,
        samples: 1,
      },
      insufficient,
    });
    const settled = await this.jobs.wait(userId, id);
    if (settled.job.status !== 'COMPLETED' || !settled.image) throw JobQueue.failureOf(settled.job);
    const image = settled.image;
    return {
      success: true,
      data: { id: image.id, url: `${this.options.appUrl}/images/${image.fileName}`, prompt: image.prompt },
      tokens: { charged: PORTRAIT_COST },
      balanceAfter: settled.balance,
      message: portraitMessages.success,
    };
  }

  /**
   * The runner of portrait jobs (server/jobs/queue.ts): the provider call with the photo
   * the job keeps while it is PENDING, bounded by the provider timeout and stopped by a
   * cancel (the Replicate adapter cancels its prediction on abort).
   */
  private handler(): JobHandler<PortraitResult> {
    return {
      lane: 'portraits',
      work: (row, stop) => {
        const input = row.input as PortraitInput;
        if (!row.photo) throw new AppError('PROVIDER_ERROR', portraitMessages.failure);
        const photo = { ...input.photo, bytes: row.photo };
        return withDeadline(
          this.options.providerTimeoutMs + DEADLINE_MARGIN_MS,
          (signal) =>
            this.provider.create({
              photo,
              prompt: input.prompt,
              aspectRatio: input.aspectRatio,
              stylePreset: input.stylePreset,
              outputFormat: input.outputFormat,
              signal,
            }),
          (cause) => new PortraitProviderError('timeout', `The portrait provider did not answer in time`, { cause }),
          (error) => error instanceof PortraitProviderError,
          stop,
        );
      },
      failure: (error) => portraitProviderErrorToAppError(error),
      image: (row, result) => ({
        originalName: null,
        prompt: row.prompt,
        width: result.width,
        height: result.height,
        steps: null,
        cfgScale: null,
        stylePreset: row.stylePreset ?? null,
        size: formatImageSize(result),
        mimeType: result.mimeType,
        seed: null,
        model: PORTRAIT_MODEL_LABEL,
        finishReason: 'success',
      }),
      storeFailureMessage: () => portraitMessages.failure,
    };
  }

  private async ownedImage(userId: number, reference: PhotoReference) {
    const found = await repo.findOwnedImage(this.db, userId, reference.ref);
    if (!found) throw referenceInvalid();
    return found;
  }

  /** The stored bytes of one of the user's images (bounded like an upload). */
  private async readStored(fileName: string): Promise<Buffer> {
    const bytes = await readStoredFile(this.storage, fileName);
    if (!bytes) throw new AppError('PHOTO_REFERENCE_INVALID', portraitMessages.referenceInvalid);
    return bytes;
  }
}

/** What a portrait job keeps to run (the photo's bytes are the row's `photo`). */
interface PortraitInput {
  prompt: string;
  aspectRatio: PortraitAspectRatio;
  stylePreset?: string;
  outputFormat: PortraitOutputFormat;
  photo: { mimeType: 'image/jpeg'; width: number; height: number };
}

interface PhotoReference {
  kind: 'reference';
  ref: { id: number } | { fileName: string };
}

interface PhotoUpload {
  kind: 'upload';
  file: SpooledFile;
}

interface PortraitRequest {
  photo: PhotoUpload | PhotoReference;
  prompt: string;
  aspectRatio: PortraitAspectRatio;
  stylePreset?: string;
  outputFormat: PortraitOutputFormat;
}

function insufficient(balance: number): AppError {
  return new AppError('INSUFFICIENT_TOKENS', portraitMessages.insufficientTokens, {
    details: { balance, cost: PORTRAIT_COST, feature: 'portrait' },
  });
}

function referenceInvalid(): AppError {
  return new AppError('PHOTO_REFERENCE_INVALID', portraitMessages.referenceInvalid);
}

/**
 * SPEC section 5's rules on the wire form, checked with the contract's multipart schema
 * (src/domain/api/portraits.ts): the first failure in SPEC's order, with its code and the
 * values its wording needs. Nothing is charged or stored before this passes.
 */
export function parseForm(form: PortraitForm, appUrl: string): PortraitRequest {
  const { fields, file } = form;
  // A form posted with no file chosen carries an empty, nameless file part.
  const upload = file && !(file.size === 0 && file.fileName === '') ? file : undefined;
  const values: Record<string, unknown> = {
    ...fields,
    // The part was spooled to disk, not held as a File: an empty File of its name stands in
    // for it, so the schema sees the photo there. Its bytes are checked next (checkUploadBytes).
    ...(upload ? { user_image_file: new File([], upload.fileName) } : {}),
  };
  const checked = generatePortraitEndpoint.multipart.safeParse(values);
  if (!checked.success) throw portraitFormRefusal(checked.error, values);
  const { prompt, user_image: reference, aspect_ratio, style_preset, output_format } = checked.data;

  const photo: PhotoUpload | PhotoReference = upload
    ? { kind: 'upload', file: upload }
    : { kind: 'reference', ref: parseReference(reference ?? '', appUrl) };
  return {
    photo,
    prompt,
    aspectRatio: aspect_ratio ?? DEFAULT_PORTRAIT_ASPECT_RATIO,
    stylePreset: style_preset === 'none' ? undefined : style_preset,
    outputFormat: output_format ?? 'webp',
  };
}

/** A form the contract refuses, as the refusal of its first broken rule in SPEC's order. */
function portraitFormRefusal(error: z.ZodError<PortraitFormFields>, values: Record<string, unknown>): AppError {
  const issue = firstPortraitIssue(error);
  if (!issue) return new AppError('VALIDATION_ERROR');
  const field = issue.path[0];
  if (issue.code === 'unrecognized_keys') {
    return new AppError('VALIDATION_ERROR', issue.message, { details: { field: issue.keys[0] } });
  }
  if (field === 'user_image_file' || field === 'user_image') {
    return new AppError('PHOTO_REQUIRED', portraitMessages.photoRequired);
  }
  if (field === 'prompt') {
    if (issueErrorCode(issue) === 'INVALID_TEXT') {
      return new AppError('INVALID_TEXT', issue.message, { details: { field } });
    }
    if (issue.message === portraitMessages.promptTooLong) {
      const length = textLength(String(values.prompt));
      return new AppError('VALIDATION_ERROR', issue.message, {
        details: { field, max: PROMPT_MAX_LENGTH, length },
      });
    }
    return new AppError('PROMPT_REQUIRED', portraitMessages.promptRequired);
  }
  return new AppError('VALIDATION_ERROR', issue.message, { details: { field: String(field) } });
}

/**
 * A reference to one of the user's stored images: its id, its file name, or its address
 * on this app (`{APP_URL}/images/{fileName}`). Never any other URL: the server is never
 * made to fetch an address of someone's choosing.
 */
export function parseReference(value: string, appUrl: string): { id: number } | { fileName: string } {
  const text = value.trim();
  if (/^[1-9]\d{0,9}$/.test(text) && Number(text) <= 2_147_483_647) return { id: Number(text) };
  if (IMAGE_FILE_NAME.test(text)) return { fileName: text };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw referenceInvalid();
  }
  const match = /^\/images\/([^/]+)$/.exec(url.pathname);
  if (url.origin !== new URL(appUrl).origin || !match?.[1] || !IMAGE_FILE_NAME.test(match[1]) || url.search) {
    throw referenceInvalid();
  }
  return { fileName: match[1] };
}
