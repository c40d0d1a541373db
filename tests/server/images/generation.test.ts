import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { IMAGE_MODELS, type ImageModelId } from '../../../src/domain/images';
import { createStabilityImageProvider } from '../../../server/providers/images/stability';
import type { ImageJob, ImageProvider } from '../../../server/providers/images/types';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import {
  startFakeStability,
  type FakeStability,
  type FakeStabilityBehaviour,
} from '../providers/images/fake-stability';
import {
  balance,
  expectLedgerConsistent,
  expectStorageMatchesRows,
  getJson,
  imagesOf,
  postJson,
  requestsOf,
  signedInUser,
} from './support';

const API_KEY = 'test-stability-key';
const TIMEOUT_MS = 1000;

const bodies: Record<ImageModelId, Record<string, unknown>> = {
  original: { prompt: 'a lighthouse at dusk', width: 1152, height: 896, seed: 42 },
  ultra: { prompt: 'a lighthouse at dusk', aspect_ratio: '16:9', negative_prompt: 'fog' },
  core: { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1', style_preset: 'anime' },
  sd3: { prompt: 'a lighthouse at dusk', aspect_ratio: '2:3', model: 'sd3.5-medium' },
};

describe.each(testDatabases())('image generation against Stability on $name', (kind) => {
  let fake: FakeStability;
  let app: TestApp;
  let accept: 'image' | 'json' = 'image';
  let logins = 0;

  beforeAll(async () => {
    fake = await startFakeStability({ apiKey: API_KEY });
    const byAccept = {
      image: createStabilityImageProvider({ apiKey: API_KEY, baseUrl: fake.url, timeoutMs: TIMEOUT_MS }),
      json: createStabilityImageProvider({ apiKey: API_KEY, baseUrl: fake.url, timeoutMs: TIMEOUT_MS, accept: 'json' }),
    };
    // Both accept modes of the real adapter, switchable per test.
    const provider: ImageProvider = { name: 'stability', generate: (job: ImageJob) => byAccept[accept].generate(job) };
    app = await startTestApp(
      kind,
      { STABILITY_API_KEY: API_KEY, STABILITY_BASE_URL: fake.url, STABILITY_TIMEOUT_MS: String(TIMEOUT_MS) },
      {},
      { providers: { images: provider } },
    );
  });
  afterEach(() => {
    fake.reset();
    accept = 'image';
  });
  afterAll(async () => {
    await app.close();
    await fake.close();
  });

  const newUser = () => signedInUser(app, `gen-${kind.name}-${(logins += 1)}@example.com`);

  it.each(['image', 'json'] as const)(
    'generates with each model in %s mode, charges its cost and serves the stored file',
    async (mode) => {
      accept = mode;
      const user = await newUser();
      let expected = 50;
      for (const model of ['original', 'core', 'sd3', 'ultra'] as const) {
        const before = fake.requests.length;
        const { status, body } = await postJson(app, user, IMAGE_MODELS[model].endpoint, bodies[model]);
        expect(status, JSON.stringify(body)).toBe(200);
        expected -= IMAGE_MODELS[model].cost;
        // The reply states the balance after the charge, so the header shows the server's figure.
        expect(body).toMatchObject({
          success: true,
          tokens: { charged: IMAGE_MODELS[model].cost },
          balanceAfter: expected,
        });
        expect(typeof body.message).toBe('string');
        const image = body.data as Record<string, unknown>;
        expect(Object.keys(image).sort()).toEqual(
          [
            'id',
            'fileName',
            'originalName',
            'imageUrl',
            'prompt',
            'width',
            'height',
            'steps',
            'cfgScale',
            'stylePreset',
            'size',
            'fileSize',
            'mimeType',
            'userId',
            'createdAt',
            'updatedAt',
            'seed',
            'model',
            'finish_reason',
            // Regenerate's parameters and the list thumbnail (issue 11).
            'negativePrompt',
            'aspectRatio',
            'modelVariant',
            'thumbnailUrl',
          ].sort(),
        );
        expect(image).toMatchObject({
          prompt: 'a lighthouse at dusk',
          userId: user.id,
          model,
          finish_reason: 'SUCCESS',
          mimeType: 'image/png',
        });
        expect(image.fileName).toMatch(/^[0-9a-f]{32}\.png$/);
        expect(image.imageUrl).toBe(`${app.config.appUrl}/images/${String(image.fileName)}`);
        expect(image.size).toBe(`${String(image.width)}x${String(image.height)}`);
        // The reply's record is the stored row, value for value and type for type, as the
        // gallery lists it, except the thumbnail, made once the job completed: the reply has
        // it when it was quicker than the reply, else the picture stands in.
        if (image.thumbnailUrl !== image.imageUrl) {
          expect(image.thumbnailUrl).toMatch(new RegExp(`^${app.config.appUrl}/images/[0-9a-f]{32}\\.webp$`));
        }
        await app.services.thumbnails.drain();
        const listed = await getJson(app, user, '/api/images/my-images?limit=1');
        const listedImage = (listed.body.data as { images: Array<Record<string, unknown>> }).images[0];
        expect(listedImage?.thumbnailUrl).toMatch(new RegExp(`^${app.config.appUrl}/images/[0-9a-f]{32}\\.webp$`));
        expect({ ...listedImage, thumbnailUrl: image.thumbnailUrl }).toEqual(image);
        expect(fake.requests.length).toBe(before + 1);
        expect(fake.requests.at(-1)?.headers.accept).toBe(
          mode === 'json' ? 'application/json' : model === 'original' ? 'image/png' : 'image/*',
        );

        const file = await fetch(`${app.url}/images/${String(image.fileName)}`);
        expect(file.status).toBe(200);
        expect(file.headers.get('content-type')).toBe('image/png');
        expect(file.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
        const bytes = Buffer.from(await file.arrayBuffer());
        expect(bytes.length).toBe(image.fileSize);
        const metadata = await sharp(bytes).metadata();
        expect([metadata.width, metadata.height]).toEqual([image.width, image.height]);
      }
      const original = (await imagesOf(app, user))[0];
      expect(original).toMatchObject({ width: 1152, height: 896, steps: 30, cfgScale: 7, seed: 42 });
      expect(await balance(app, user)).toBe(expected);
      const requests = await requestsOf(app, user);
      expect(requests.map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED']);
      await expectLedgerConsistent(app, user);
      await expectStorageMatchesRows(app);
    },
  );

  it('keeps what the form sent, model by model: what Stability gets, the request row and the record', async () => {
    const user = await newUser();
    const prompt = 'a lighthouse at dusk';
    const cases = [
      {
        // SDXL v1 takes a size, steps 30 and cfg 7 (DESIGN), a style and a negative prompt.
        model: 'original',
        body: { prompt, width: 1152, height: 896, seed: 42, negative_prompt: 'fog', style_preset: 'photographic' },
        request: { steps: 30, cfgScale: 7, stylePreset: 'photographic', negativePrompt: 'fog' },
        record: { steps: 30, cfgScale: 7, stylePreset: 'photographic', negativePrompt: 'fog', aspectRatio: null },
        sent: { style_preset: 'photographic', negative: 'fog' },
      },
      {
        // 'none' is the form's "no style"; a blank negative prompt is no negative prompt.
        model: 'core',
        body: { prompt, aspect_ratio: '3:2', style_preset: 'none', negative_prompt: '   ' },
        request: { steps: 0, cfgScale: null, stylePreset: null, negativePrompt: null },
        record: { steps: null, cfgScale: null, stylePreset: null, negativePrompt: null, aspectRatio: '3:2' },
        sent: {},
      },
      {
        model: 'sd3',
        body: { prompt, aspect_ratio: '2:3', model: 'sd3.5-medium', negative_prompt: 'rain' },
        request: { steps: 0, cfgScale: null, stylePreset: null, negativePrompt: 'rain' },
        record: { steps: null, cfgScale: null, stylePreset: null, negativePrompt: 'rain', aspectRatio: '2:3' },
        sent: { model: 'sd3.5-medium', negative: 'rain' },
      },
      {
        // Ultra has no style presets and no model variants: neither is kept.
        model: 'ultra',
        body: { prompt, aspect_ratio: '16:9', style_preset: 'anime', model: 'sd3.5-medium' },
        request: { steps: 0, cfgScale: null, stylePreset: null, negativePrompt: null },
        record: { steps: null, cfgScale: null, stylePreset: null, negativePrompt: null, aspectRatio: '16:9' },
        sent: {},
      },
    ] as const;
    for (const { model, body, request, record, sent } of cases) {
      const reply = await postJson(app, user, IMAGE_MODELS[model].endpoint, body);
      expect(reply.status, `${model}: ${JSON.stringify(reply.body)}`).toBe(200);
      const image = reply.body.data as Record<string, unknown>;
      expect(image, model).toMatchObject({
        ...record,
        model,
        modelVariant: model === 'sd3' ? 'sd3.5-medium' : null,
      });

      const call = fake.requests.at(-1);
      if (model === 'original') {
        const json = call?.json as { text_prompts: unknown; style_preset?: string; seed?: number };
        expect(json.text_prompts).toEqual([
          { text: prompt, weight: 1 },
          { text: sent.negative, weight: -1 },
        ]);
        expect(json).toMatchObject({ style_preset: sent.style_preset, seed: 42, width: 1152, height: 896 });
      } else {
        const fields = call?.fields ?? {};
        expect(fields.negative_prompt, model).toBe('negative' in sent ? sent.negative : undefined);
        expect(fields.style_preset, model).toBeUndefined();
        expect(fields.model, model).toBe(model === 'sd3' ? sent.model : undefined);
        expect(fields.aspect_ratio, model).toBe(body.aspect_ratio);
      }

      const row = (await requestsOf(app, user)).at(-1);
      // The request row keeps the size asked for: the size Stability delivers for the ratio.
      expect(row, model).toMatchObject({
        ...request,
        model,
        prompt,
        samples: 1,
        status: 'COMPLETED',
        width: image.width,
        height: image.height,
      });
    }
    await expectLedgerConsistent(app, user);
  });

  const failures: Array<{
    name: string;
    model: ImageModelId;
    behaviour: FakeStabilityBehaviour;
    status: number;
    code: string;
    message: string;
  }> = [
    {
      name: 'a CONTENT_FILTERED finish reason',
      model: 'core',
      behaviour: { kind: 'content-filtered' },
      status: 422,
      code: 'CONTENT_FILTERED',
      message: 'The request was blocked by the content filter',
    },
    {
      name: '403 content_moderation',
      model: 'ultra',
      behaviour: { kind: 'error', status: 403 },
      status: 422,
      code: 'CONTENT_FILTERED',
      message: 'The request was blocked by the content filter',
    },
    {
      name: '400 with the provider message',
      model: 'core',
      behaviour: { kind: 'error', status: 400, message: 'prompt: contains unsupported characters' },
      status: 502,
      code: 'PROVIDER_ERROR',
      message: 'prompt: contains unsupported characters',
    },
    {
      name: '400 without a message',
      model: 'original',
      behaviour: { kind: 'error', status: 400, body: '<html>bad gateway</html>', contentType: 'text/html' },
      status: 502,
      code: 'PROVIDER_ERROR',
      message: 'Generation failed',
    },
    {
      name: '402 payment_required (our Stability account)',
      model: 'sd3',
      behaviour: { kind: 'error', status: 402 },
      status: 502,
      code: 'PROVIDER_ERROR',
      message: 'SD3 generation failed',
    },
    {
      name: '403 permission_denied on v1',
      model: 'original',
      behaviour: { kind: 'error', status: 403 },
      status: 502,
      code: 'PROVIDER_ERROR',
      message: 'Generation failed',
    },
    {
      name: '429 rate limited',
      model: 'ultra',
      behaviour: { kind: 'error', status: 429 },
      status: 429,
      code: 'RATE_LIMITED',
      message: 'Please try again later',
    },
    {
      name: '500',
      model: 'ultra',
      behaviour: { kind: 'error', status: 500 },
      status: 502,
      code: 'PROVIDER_ERROR',
      message: 'Ultra generation failed',
    },
    {
      name: 'a timeout',
      model: 'sd3',
      behaviour: { kind: 'slow', delayMs: TIMEOUT_MS * 3 },
      status: 504,
      code: 'PROVIDER_TIMEOUT',
      message: 'Please try again later',
    },
    {
      name: 'a malformed JSON body',
      model: 'core',
      behaviour: { kind: 'malformed', variant: 'invalid-json' },
      status: 502,
      code: 'PROVIDER_ERROR',
      message: 'Core generation failed',
    },
    {
      name: 'an undecodable image',
      model: 'original',
      behaviour: { kind: 'malformed', variant: 'undecodable-image' },
      status: 502,
      code: 'PROVIDER_ERROR',
      message: 'Generation failed',
    },
    {
      name: 'a dropped connection',
      model: 'ultra',
      behaviour: { kind: 'drop-connection' },
      status: 502,
      code: 'PROVIDER_ERROR',
      message: 'Ultra generation failed',
    },
  ];

  it.each(failures)('refunds $name with "$message"', async ({ model, behaviour, status, code, message }) => {
    const user = await newUser();
    fake.setBehaviour(behaviour);
    const { status: got, body } = await postJson(app, user, IMAGE_MODELS[model].endpoint, bodies[model]);
    expect(got, JSON.stringify(body)).toBe(status);
    expect(body).toMatchObject({ success: false, code, message });
    expect(fake.requests.length).toBe(1);
    expect(await balance(app, user)).toBe(50);
    const [request] = await requestsOf(app, user);
    expect(request).toMatchObject({ status: 'FAILED', errorMessage: message, cost: IMAGE_MODELS[model].cost });
    expect(await imagesOf(app, user)).toEqual([]);
    await expectLedgerConsistent(app, user);
    await expectStorageMatchesRows(app);
  });
});
