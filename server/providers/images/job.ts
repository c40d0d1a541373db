import {
  IMAGE_MODELS,
  generationMessages,
  isAspectRatio,
  isImageModelId,
  isOutputFormatAllowed,
  isSd3Variant,
  isSdxlSize,
  isStylePreset,
  NEGATIVE_PROMPT_MAX_LENGTH,
  PROMPT_MAX_LENGTH,
  SEED_MAX,
  unknownModelMessage,
  type ImageSize,
} from '../../../src/domain/images';
import { textLength } from '../../../src/domain/text';
import { AppError } from '../../errors';
import { aspectRatioPixelSize } from './sizes';
import type { ImageJob } from './types';

/**
 * The highest seed Stability's v2beta endpoints (ultra, core, sd3) take: 0 to 4294967294
 * (PROVIDERS.md), one less than SPEC's form allows.
 */
export const V2BETA_SEED_MAX = 4294967294;

/**
 * Both providers refuse the same malformed jobs, so a job that works offline also makes
 * sense to Stability. Routes validate bodies first; reaching this is a programming error
 * or a hand-built job, reported with the catalogue's validation code.
 */
export function assertValidJob(job: ImageJob): void {
  const fail = (message: string): never => {
    throw new AppError('VALIDATION_ERROR', message);
  };
  if (!isImageModelId(job.model)) fail(unknownModelMessage(String(job.model)));
  if (job.prompt.trim() === '') fail(generationMessages.promptRequired);
  // Counted as the route counts (code points): a prompt the route accepted is never refused here.
  if (textLength(job.prompt) > PROMPT_MAX_LENGTH) fail(generationMessages.promptTooLong);
  if (textLength(job.negativePrompt ?? '') > NEGATIVE_PROMPT_MAX_LENGTH) fail(generationMessages.negativePromptTooLong);
  if (job.seed !== undefined && !(Number.isInteger(job.seed) && job.seed >= 0 && job.seed <= SEED_MAX)) {
    fail(generationMessages.seedInvalid);
  }
  const model = IMAGE_MODELS[job.model];
  if (model.dimension === 'size') {
    if (job.width === undefined || job.height === undefined) fail(generationMessages.sizeRequired);
    if (!isSdxlSize(job.width, job.height)) fail(generationMessages.sizeInvalid);
  } else {
    if (!job.aspectRatio) fail(generationMessages.aspectRatioRequired);
    if (!isAspectRatio(job.aspectRatio)) fail(generationMessages.aspectRatioInvalid);
  }
  if (model.hasVariants) {
    if (!job.sd3Model) fail(generationMessages.variantRequired);
    if (!isSd3Variant(job.sd3Model)) fail(generationMessages.variantInvalid);
  }
  if (job.stylePreset !== undefined && job.stylePreset !== '' && !isStylePreset(job.stylePreset)) {
    fail(generationMessages.stylePresetInvalid);
  }
  if (!isOutputFormatAllowed(job.model, job.outputFormat)) {
    fail(`${model.label} does not support ${job.outputFormat} output`);
  }
}

/** The pixel size a valid job produces. */
export function jobPixelSize(job: ImageJob): ImageSize {
  if (job.model === 'original') {
    return { width: job.width ?? 0, height: job.height ?? 0 };
  }
  if (!isAspectRatio(job.aspectRatio)) throw new AppError('VALIDATION_ERROR', generationMessages.aspectRatioInvalid);
  return aspectRatioPixelSize(job.model, job.aspectRatio);
}

/** A style preset worth sending or drawing: 'none' and blank mean no preset. */
export function effectiveStylePreset(job: ImageJob): string | undefined {
  return job.stylePreset && job.stylePreset !== 'none' ? job.stylePreset : undefined;
}
