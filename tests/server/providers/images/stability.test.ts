// One file: one adapter's tests against one fake replaying Stability's published shapes.
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../../../server/errors';
import { ASPECT_RATIO_PIXEL_SIZES } from '../../../../server/providers/images/sizes';
import { createStabilityImageProvider } from '../../../../server/providers/images/stability';
import { ImageProviderError, type ImageJob, type ImageProvider } from '../../../../server/providers/images/types';
import { FAKE_DEFAULT_SEED, startFakeStability, V1_PATH, type FakeStability } from './fake-stability';

const API_KEY = 'sk-test-123';
let fake: FakeStability;

beforeAll(async () => {
  fake = await startFakeStability({ apiKey: API_KEY });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

function provider(accept: 'image' | 'json', timeoutMs = 5000): ImageProvider {
  return createStabilityImageProvider({ apiKey: API_KEY, baseUrl: fake.url, timeoutMs, accept });
}

const jobs = {
  original: {
    model: 'original',
    prompt: 'a red fox',
    negativePrompt: 'blurry',
    seed: 42,
    width: 1216,
    height: 832,
    stylePreset: 'photographic',
    outputFormat: 'png',
  },
  ultra: {
    model: 'ultra',
    prompt: 'a red fox',
    negativePrompt: 'blurry',
    seed: 42,
    aspectRatio: '16:9',
    outputFormat: 'webp',
  },
  core: {
    model: 'core',
    prompt: 'a red fox',
    seed: 42,
    aspectRatio: '2:3',
    stylePreset: 'anime',
    outputFormat: 'jpeg',
  },
  sd3: {
    model: 'sd3',
    prompt: 'a red fox',
    negativePrompt: 'blurry',
    aspectRatio: '21:9',
    sd3Model: 'sd3.5-large-turbo',
    outputFormat: 'png',
  },
} satisfies Record<string, ImageJob>;

async function failure(promise: Promise<unknown>): Promise<ImageProviderError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ImageProviderError);
    return error as ImageProviderError;
  }
  throw new Error('expected the call to fail');
}

describe.each(['image', 'json'] as const)('Stability adapter, accept=%s', (accept) => {
  it('original: v1 JSON request, PNG result read from the bytes', async () => {
    const result = await provider(accept).generate(jobs.original);
    expect(result).toMatchObject({
      mimeType: 'image/png',
      width: 1216,
      height: 832,
      seed: 42,
      finishReason: 'SUCCESS',
      engine: 'stability',
    });
    expect((await sharp(result.bytes).metadata()).format).toBe('png');

    const [request] = fake.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe(V1_PATH);
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.accept).toBe(accept === 'json' ? 'application/json' : 'image/png');
    expect(request?.json).toEqual({
      text_prompts: [
        { text: 'a red fox', weight: 1 },
        { text: 'blurry', weight: -1 },
      ],
      width: 1216,
      height: 832,
      samples: 1,
      steps: 30,
      cfg_scale: 7,
      seed: 42,
      style_preset: 'photographic',
    });
  });

  it('original: leaves out seed, negative prompt and a "none" style', async () => {
    const result = await provider(accept).generate({
      model: 'original',
      prompt: 'plain',
      negativePrompt: '  ',
      stylePreset: 'none',
      width: 1024,
      height: 1024,
      outputFormat: 'png',
    });
    expect(result.seed).toBe(FAKE_DEFAULT_SEED);
    expect(fake.requests[0]?.json).toEqual({
      text_prompts: [{ text: 'plain', weight: 1 }],
      width: 1024,
      height: 1024,
      samples: 1,
      steps: 30,
      cfg_scale: 7,
    });
  });

  it('original: converts the PNG from v1 when WebP or JPEG is asked for', async () => {
    for (const outputFormat of ['webp', 'jpeg'] as const) {
      const result = await provider(accept).generate({ ...jobs.original, outputFormat });
      expect(result.mimeType).toBe(`image/${outputFormat}`);
      expect((await sharp(result.bytes).metadata()).format).toBe(outputFormat);
      expect([result.width, result.height]).toEqual([1216, 832]);
    }
  });

  it('ultra: v2beta multipart with prompt, negative prompt, ratio, seed and format', async () => {
    const result = await provider(accept).generate(jobs.ultra);
    const expected = ASPECT_RATIO_PIXEL_SIZES.ultra['16:9'];
    expect(result).toMatchObject({
      mimeType: 'image/webp',
      ...expected,
      seed: 42,
      finishReason: 'SUCCESS',
      engine: 'stability',
    });
    expect((await sharp(result.bytes).metadata()).format).toBe('webp');

    const [request] = fake.requests;
    expect(request?.path).toBe('/v2beta/stable-image/generate/ultra');
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request?.headers.accept).toBe(accept === 'json' ? 'application/json' : 'image/*');
    expect(request?.fields).toEqual({
      prompt: 'a red fox',
      negative_prompt: 'blurry',
      aspect_ratio: '16:9',
      seed: '42',
      output_format: 'webp',
    });
  });

  it('core: sends style_preset', async () => {
    const result = await provider(accept).generate(jobs.core);
    expect(result).toMatchObject({ mimeType: 'image/jpeg', ...ASPECT_RATIO_PIXEL_SIZES.core['2:3'], seed: 42 });
    expect(fake.requests[0]?.path).toBe('/v2beta/stable-image/generate/core');
    expect(fake.requests[0]?.fields).toEqual({
      prompt: 'a red fox',
      aspect_ratio: '2:3',
      seed: '42',
      output_format: 'jpeg',
      style_preset: 'anime',
    });
  });

  it('sd3: sends model and mode, and reports the seed Stability chose', async () => {
    const result = await provider(accept).generate(jobs.sd3);
    expect(result).toMatchObject({
      mimeType: 'image/png',
      ...ASPECT_RATIO_PIXEL_SIZES.sd3['21:9'],
      seed: FAKE_DEFAULT_SEED,
    });
    expect(fake.requests[0]?.path).toBe('/v2beta/stable-image/generate/sd3');
    expect(fake.requests[0]?.fields).toEqual({
      prompt: 'a red fox',
      negative_prompt: 'blurry',
      aspect_ratio: '21:9',
      output_format: 'png',
      model: 'sd3.5-large-turbo',
      mode: 'text-to-image',
    });
  });

  it('reads the true size from the bytes, not from the request', async () => {
    fake.setBehaviour({ kind: 'success', size: { width: 320, height: 200 } });
    const result = await provider(accept).generate(jobs.core);
    expect([result.width, result.height]).toEqual([320, 200]);
  });

  it('returns CONTENT_FILTERED as a finish reason, not an error', async () => {
    fake.setBehaviour({ kind: 'content-filtered', seed: 99 });
    for (const job of Object.values(jobs)) {
      const result = await provider(accept).generate(job);
      expect(result.finishReason).toBe('CONTENT_FILTERED');
      expect(result.seed).toBe(99);
    }
  });

  it('treats finish reason ERROR as a malformed answer', async () => {
    fake.setBehaviour({ kind: 'success', finishReason: 'ERROR' });
    const error = await failure(provider(accept).generate(jobs.original));
    expect(error.kind).toBe('malformed');
  });

  it.each([
    ['no image', 'no-image'],
    ['undecodable image', 'undecodable-image'],
    ['truncated image', 'truncated-image'],
    ['HTML instead of an image', 'wrong-content-type'],
  ] as const)('reports %s as malformed', async (_label, variant) => {
    fake.setBehaviour({ kind: 'malformed', variant });
    for (const job of [jobs.original, jobs.ultra]) {
      const error = await failure(provider(accept).generate(job));
      expect(error.kind).toBe('malformed');
      expect(error.status).toBe(200);
    }
  });
});

describe('Stability adapter errors', () => {
  it('reports bad JSON as malformed', async () => {
    fake.setBehaviour({ kind: 'malformed', variant: 'invalid-json' });
    for (const job of [jobs.original, jobs.sd3]) {
      const error = await failure(provider('json').generate(job));
      expect(error.kind).toBe('malformed');
      expect(error.message).toMatch(/invalid JSON/);
    }
  });

  it.each([
    // The reference's examples (fake-stability.ts V2_ERROR_DEFAULTS).
    [400, 'bad_request', 'some-field: is required'],
    [402, 'payment_required', 'You lack sufficient credits to make this request'],
    [
      403,
      'content_moderation',
      'Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.',
    ],
    [413, 'payload_too_large', 'body: payloads cannot be larger than 10MiB in size'],
    [422, 'invalid_language', 'English is the only supported language for this service.'],
    [
      429,
      'rate_limit_exceeded',
      'You have exceeded the rate limit of 150 requests within a 10 second period, and have been timed out for 60 seconds.',
    ],
    [500, 'internal_error', 'An unexpected server error has occurred, please try again later.'],
  ])('v2beta %d -> http error with the message from errors[]', async (status, name, message) => {
    fake.setBehaviour({ kind: 'error', status });
    const error = await failure(provider('image').generate(jobs.ultra));
    expect(error).toMatchObject({ kind: 'http', status, providerMessage: message, providerCode: name });
    expect(error.message).toBe(`Stability answered ${status}: ${message}`);
  });

  it.each([
    [400, 'invalid_height_or_width', 'height and width must be one of the SDXL sizes'],
    [402, 'payment_required', 'You lack sufficient credits to make this request'],
    [403, 'permission_denied', 'You do not have access to this engine'],
    [429, 'rate_limit_exceeded', 'You have exceeded the rate limit'],
    [500, 'server_error', 'An unexpected server error occurred'],
  ])('v1 %d -> http error with the message from {message}', async (status, name, message) => {
    fake.setBehaviour({ kind: 'error', status, name, message });
    const error = await failure(provider('json').generate(jobs.original));
    expect(error).toMatchObject({ kind: 'http', status, providerMessage: message, providerCode: name });
  });

  it('joins several v2beta errors and falls back to the name when errors[] is empty', async () => {
    fake.setBehaviour({
      kind: 'error',
      status: 400,
      body: JSON.stringify({ id: 'abc', name: 'bad_request', errors: ['seed: too big', 'prompt: too long'] }),
      contentType: 'application/json',
    });
    expect((await failure(provider('image').generate(jobs.core))).providerMessage).toBe(
      'seed: too big; prompt: too long',
    );
    fake.setBehaviour({
      kind: 'error',
      status: 422,
      body: JSON.stringify({ id: 'abc', name: 'invalid_language', errors: [] }),
      contentType: 'application/json',
    });
    expect(await failure(provider('image').generate(jobs.core))).toMatchObject({
      status: 422,
      providerMessage: 'invalid_language',
    });
  });

  it('has no provider message for a body that is not the provider JSON', async () => {
    fake.setBehaviour({ kind: 'error', status: 502, body: '<html>Bad Gateway</html>' });
    const error = await failure(provider('image').generate(jobs.core));
    expect(error).toMatchObject({ kind: 'http', status: 502, providerMessage: undefined });
    expect(error.message).toBe('Stability answered 502');
  });

  it('passes on the 401 for a wrong key', async () => {
    const wrong = createStabilityImageProvider({ apiKey: 'sk-wrong', baseUrl: fake.url, timeoutMs: 5000 });
    expect(await failure(wrong.generate(jobs.sd3))).toMatchObject({
      kind: 'http',
      status: 401,
      providerCode: 'unauthorized',
    });
    expect(await failure(wrong.generate(jobs.original))).toMatchObject({
      status: 401,
      // merged.json responses.401 example.
      providerMessage: 'missing authorization header',
    });
  });

  it('times out a slow answer', async () => {
    fake.setBehaviour({ kind: 'slow', delayMs: 3000 });
    const started = Date.now();
    const error = await failure(provider('image', 200).generate(jobs.ultra));
    expect(error.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('waits for a slow answer within the timeout', async () => {
    fake.setBehaviour({ kind: 'slow', delayMs: 100 });
    const result = await provider('json', 5000).generate(jobs.ultra);
    expect(result.finishReason).toBe('SUCCESS');
  });

  it("hands back the caller's own abort reason", async () => {
    fake.setBehaviour({ kind: 'slow', delayMs: 3000 });
    const controller = new AbortController();
    const reason = new Error('server shutting down');
    setTimeout(() => controller.abort(reason), 100);
    await expect(provider('image', 10_000).generate({ ...jobs.core, signal: controller.signal })).rejects.toBe(reason);
  });

  it('reports a dropped connection and an unreachable host as network errors', async () => {
    fake.setBehaviour({ kind: 'drop-connection' });
    expect((await failure(provider('image').generate(jobs.core))).kind).toBe('network');
    const nowhere = createStabilityImageProvider({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:1', timeoutMs: 5000 });
    expect((await failure(nowhere.generate(jobs.core))).kind).toBe('network');
  });

  it('never sends WebP to sd3, which older Stability versions refuse', async () => {
    fake.setSd3Webp('refuse');
    await expect(provider('image').generate({ ...jobs.sd3, outputFormat: 'webp' })).rejects.toSatisfy(
      (error: unknown) => error instanceof AppError && error.code === 'VALIDATION_ERROR',
    );
    expect(fake.requests).toHaveLength(0);
    // PNG and JPEG go through whichever way the fake is set.
    for (const outputFormat of ['png', 'jpeg'] as const) {
      const result = await provider('image').generate({ ...jobs.sd3, outputFormat });
      expect(result.mimeType).toBe(`image/${outputFormat}`);
    }
  });
});

describe('fake Stability', () => {
  it('refuses or accepts webp on /sd3 as configured', async () => {
    const send = async (): Promise<Response> => {
      const form = new FormData();
      form.append('prompt', 'x');
      form.append('output_format', 'webp');
      form.append('model', 'sd3.5-large');
      return fetch(`${fake.url}/v2beta/stable-image/generate/sd3`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, accept: 'application/json' },
        body: form,
      });
    };
    fake.setSd3Webp('refuse');
    const refused = await send();
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      name: 'bad_request',
      errors: ['output_format: must be one of png, jpeg'],
    });
    fake.setSd3Webp('accept');
    const accepted = await send();
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ finish_reason: 'SUCCESS' });
  });

  it('checks v1 sizes the way Stability does', async () => {
    const response = await fetch(`${fake.url}${V1_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ text_prompts: [{ text: 'x', weight: 1 }], width: 512, height: 512 }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ name: 'invalid_height_or_width' });
  });

  it('uses queued behaviours once, before the standing one', async () => {
    fake.queueBehaviours({ kind: 'error', status: 500 });
    const p = provider('image');
    expect((await failure(p.generate(jobs.core))).status).toBe(500);
    expect((await p.generate(jobs.core)).finishReason).toBe('SUCCESS');
    expect(fake.requests).toHaveLength(2);
  });
});
