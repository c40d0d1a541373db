import { portraitMessages } from '../../src/domain/portraits';
import { AppError, isAppError } from '../errors';
import { isPortraitProviderError } from '../providers/portraits/types';

const MODERATION = /nsfw|safety|flagged|moderat|sensitive/i;

/**
 * What the user hears when the portrait provider fails. A refused picture says so; an
 * overloaded provider asks to try later; everything else (our account, the model's input
 * names, an outage) is SPEC's "Face-swap generation failed", so provider internals never
 * reach the screen. The cause is kept for the log.
 */
export function portraitProviderErrorToAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (!isPortraitProviderError(error))
    return new AppError('PROVIDER_ERROR', portraitMessages.failure, { cause: error });
  const details = { provider: 'portrait', kind: error.kind, status: error.status };
  if (error.kind === 'timeout') return new AppError('PROVIDER_TIMEOUT', undefined, { cause: error, details });
  // The client went away or the server is shutting down: nobody reads this answer, the row keeps it.
  if (error.kind === 'aborted') return new AppError('SERVICE_UNAVAILABLE', undefined, { cause: error, details });
  if (error.kind === 'http' && error.status === 429) {
    return new AppError('RATE_LIMITED', undefined, { cause: error, details });
  }
  if (error.kind === 'failed' && error.providerMessage && MODERATION.test(error.providerMessage)) {
    return new AppError('CONTENT_FILTERED', undefined, { cause: error, details });
  }
  return new AppError('PROVIDER_ERROR', portraitMessages.failure, { cause: error, details });
}
