import { IMAGE_MODELS, type ImageModelId } from '../../../src/domain/images';
import { AppError, isAppError } from '../../errors';
import { isImageProviderError } from './types';

/**
 * What the user hears when an image provider fails. Only faults the user can act on
 * (the prompt was moderated or rejected) pass the provider's wording through; account
 * and outage problems (401, 402, 5xx) get the model's own SPEC text, so our billing
 * state with Stability never leaks into the UI.
 */
export function imageProviderErrorToAppError(error: unknown, model: ImageModelId): AppError {
  if (isAppError(error)) return error;
  const failure = IMAGE_MODELS[model].failureMessage;
  if (!isImageProviderError(error)) return new AppError('PROVIDER_ERROR', failure, { cause: error });

  const details = { provider: 'stability', kind: error.kind, status: error.status, providerCode: error.providerCode };
  if (error.kind === 'timeout') return new AppError('PROVIDER_TIMEOUT', undefined, { cause: error, details });
  if (error.kind === 'http') {
    if (error.status === 403 && error.providerCode === 'content_moderation') {
      return new AppError('CONTENT_FILTERED', undefined, { cause: error, details });
    }
    if (error.status === 429) return new AppError('RATE_LIMITED', undefined, { cause: error, details });
    if ((error.status === 400 || error.status === 413 || error.status === 422) && error.providerMessage) {
      return new AppError('PROVIDER_ERROR', error.providerMessage, { cause: error, details });
    }
  }
  return new AppError('PROVIDER_ERROR', failure, { cause: error, details });
}
