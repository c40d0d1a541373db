import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../server/errors';
import { imageProviderErrorToAppError } from '../../../../server/providers/images/app-error';
import { ImageProviderError } from '../../../../server/providers/images/types';

describe('imageProviderErrorToAppError', () => {
  it('maps a timeout to PROVIDER_TIMEOUT', () => {
    const error = imageProviderErrorToAppError(new ImageProviderError('timeout', 'slow'), 'ultra');
    expect(error).toMatchObject({ code: 'PROVIDER_TIMEOUT', status: 504, message: 'Please try again later' });
  });

  it('maps v2beta content moderation to CONTENT_FILTERED', () => {
    const error = imageProviderErrorToAppError(
      new ImageProviderError('http', 'x', {
        status: 403,
        providerCode: 'content_moderation',
        providerMessage: 'flagged',
      }),
      'core',
    );
    expect(error.code).toBe('CONTENT_FILTERED');
  });

  it('maps a rate limit to RATE_LIMITED', () => {
    expect(imageProviderErrorToAppError(new ImageProviderError('http', 'x', { status: 429 }), 'sd3').code).toBe(
      'RATE_LIMITED',
    );
  });

  it("passes the provider's words on for request faults only", () => {
    const rejected = imageProviderErrorToAppError(
      new ImageProviderError('http', 'x', { status: 422, providerMessage: 'English is the only supported language' }),
      'sd3',
    );
    expect(rejected).toMatchObject({ code: 'PROVIDER_ERROR', message: 'English is the only supported language' });
    const credits = imageProviderErrorToAppError(
      new ImageProviderError('http', 'x', { status: 402, providerMessage: 'You lack sufficient credits' }),
      'sd3',
    );
    expect(credits).toMatchObject({ code: 'PROVIDER_ERROR', message: 'SD3 generation failed' });
  });

  it('uses the per-model SPEC failure text otherwise', () => {
    const cases = [
      ['original', 'Generation failed'],
      ['ultra', 'Ultra generation failed'],
      ['core', 'Core generation failed'],
      ['sd3', 'SD3 generation failed'],
    ] as const;
    for (const [model, message] of cases) {
      expect(imageProviderErrorToAppError(new ImageProviderError('malformed', 'bad'), model).message).toBe(message);
      expect(imageProviderErrorToAppError(new ImageProviderError('network', 'down'), model).message).toBe(message);
      expect(imageProviderErrorToAppError(new Error('boom'), model).message).toBe(message);
    }
  });

  it('leaves AppErrors alone', () => {
    const original = new AppError('VALIDATION_ERROR', 'Prompt is required');
    expect(imageProviderErrorToAppError(original, 'core')).toBe(original);
  });
});
