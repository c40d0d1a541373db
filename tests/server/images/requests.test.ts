import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MODELS, type ImageModelId } from '../../../src/domain/images';
import { generationRequests, tokenLedger } from '../../../server/db/schema';
import { createStabilityImageProvider } from '../../../server/providers/images/stability';
import { startFakeStability, type FakeStability } from '../providers/images/fake-stability';
import { LIVENESS } from '../../../server/background/liveness';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import {
  balance,
  expectLedgerConsistent,
  expectStorageMatchesRows,
  getJson,
  imagesOf,
  postJson,
  requestsOf,
  signedInUser,
  type TestUser,
} from './support';

const sizeInvalid =
  'Image size must be one of 1024x1024, 1152x896, 896x1152, 1216x832, 832x1216, 1344x768, 768x1344, 1536x640, 640x1536';
const ratioInvalid = 'Aspect ratio must be one of 1:1, 16:9, 21:9, 2:3, 3:2, 4:5, 5:4, 9:16, 9:21';

const badInput: Array<{ name: string; model: ImageModelId; body: unknown; message: string }> = [
  {
    name: 'a blank prompt',
    model: 'original',
    body: { prompt: '   ', width: 1024, height: 1024 },
    message: 'Prompt is required',
  },
  { name: 'no prompt', model: 'ultra', body: { aspect_ratio: '1:1' }, message: 'Prompt is required' },
  {
    name: 'a prompt that is a number',
    model: 'core',
    body: { prompt: 123, aspect_ratio: '1:1' },
    message: 'Prompt is required',
  },
  { name: 'a body that is an array', model: 'core', body: [1, 2], message: 'Prompt is required' },
  {
    name: 'a prompt over 2000',
    model: 'ultra',
    body: { prompt: 'x'.repeat(2001), aspect_ratio: '1:1' },
    message: 'Prompt must be less than 2000 characters',
  },
  {
    name: 'a negative prompt over 2000',
    model: 'sd3',
    body: { prompt: 'ok', negative_prompt: 'n'.repeat(2001), aspect_ratio: '1:1', model: 'sd3.5-large' },
    message: 'Negative prompt must be less than 2000 characters',
  },
  {
    name: 'a negative prompt that is not text',
    model: 'ultra',
    body: { prompt: 'ok', negative_prompt: 5, aspect_ratio: '1:1' },
    message: 'Negative prompt must be text',
  },
  ...[-1, 1.5, 4294967296, '12', true].map((seed) => ({
    name: `seed ${JSON.stringify(seed)}`,
    model: 'original' as const,
    body: { prompt: 'ok', seed, width: 1024, height: 1024 },
    message: 'Seed must be a number between 0 and 4294967295',
  })),
  { name: 'no size', model: 'original', body: { prompt: 'ok' }, message: 'Image size is required' },
  {
    name: 'a size off the list',
    model: 'original',
    body: { prompt: 'ok', width: 1000, height: 1000 },
    message: sizeInvalid,
  },
  {
    name: 'a size as text',
    model: 'original',
    body: { prompt: 'ok', width: '1024', height: 1024 },
    message: sizeInvalid,
  },
  { name: 'no aspect ratio', model: 'core', body: { prompt: 'ok' }, message: 'Aspect ratio is required' },
  { name: 'a ratio off the list', model: 'ultra', body: { prompt: 'ok', aspect_ratio: '7:3' }, message: ratioInvalid },
  {
    name: 'a style off the list',
    model: 'core',
    body: { prompt: 'ok', aspect_ratio: '1:1', style_preset: 'oil-paint' },
    message:
      'Style preset must be one of none, anime, cinematic, digital-art, enhance, fantasy-art, isometric, line-art, low-poly, modeling-compound, neon-punk, origami, photographic, pixel-art, tile-texture',
  },
  {
    name: 'no sd3 variant',
    model: 'sd3',
    body: { prompt: 'ok', aspect_ratio: '1:1' },
    message: 'Model variant is required for SD3',
  },
  {
    name: 'an sd3 variant off the list',
    model: 'sd3',
    body: { prompt: 'ok', aspect_ratio: '1:1', model: 'sd4' },
    message: 'Model variant must be one of sd3.5-large, sd3.5-large-turbo, sd3.5-medium',
  },
  // SPEC's order: the first failing rule wins.
  {
    name: 'blank prompt before a bad seed and a bad size',
    model: 'original',
    body: { prompt: '', seed: -5, width: 1, height: 1 },
    message: 'Prompt is required',
  },
  {
    name: 'a long negative prompt before a bad seed',
    model: 'ultra',
    body: { prompt: 'ok', negative_prompt: 'n'.repeat(2001), seed: -5 },
    message: 'Negative prompt must be less than 2000 characters',
  },
  {
    name: 'a bad seed before a missing ratio',
    model: 'sd3',
    body: { prompt: 'ok', seed: 'x' },
    message: 'Seed must be a number between 0 and 4294967295',
  },
  {
    name: 'a missing ratio before a missing variant',
    model: 'sd3',
    body: { prompt: 'ok' },
    message: 'Aspect ratio is required',
  },
];

describe.each(testDatabases())('image requests on $name (offline renderer)', (kind) => {
  let app: TestApp;
  let user: TestUser;
  let logins = 0;
  beforeAll(async () => {
    app = await startTestApp(kind);
    user = await signedInUser(app, `validation-${kind.name}@example.com`);
  });
  afterAll(async () => {
    await app.close();
  });
  const newUser = () => signedInUser(app, `req-${kind.name}-${(logins += 1)}@example.com`);

  it.each(badInput)('refuses $name with "$message", charging and storing nothing', async ({ model, body, message }) => {
    const { status, body: reply } = await postJson(app, user, IMAGE_MODELS[model].endpoint, body);
    expect(reply).toMatchObject({ success: false, code: 'VALIDATION_ERROR', message });
    expect(status).toBe(400);
    expect(await balance(app, user)).toBe(50);
    expect(await requestsOf(app, user)).toEqual([]);
    expect(await imagesOf(app, user)).toEqual([]);
    await expectLedgerConsistent(app, user);
  });

  it('refuses a body that is not JSON or too large, charging nothing', async () => {
    const notJson = await postJson(app, user, '/api/stability-ultra/generate', '{"prompt": ');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    const huge = await postJson(app, user, '/api/stability-ultra/generate', {
      prompt: 'ok',
      aspect_ratio: '1:1',
      padding: 'p'.repeat(200_000),
    });
    // 413 is the HTTP status for a body over the limit; the catalogue's text comes with it.
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
    expect(await balance(app, user)).toBe(50);
    expect(await requestsOf(app, user)).toEqual([]);
  });

  it('answers 401 without a session and 403 from another site, charging nothing', async () => {
    for (const model of Object.values(IMAGE_MODELS)) {
      const anonymous = await postJson(app, undefined, model.endpoint, { prompt: 'ok', aspect_ratio: '1:1' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toMatchObject({ success: false, code: 'UNAUTHORIZED', message: 'Unauthorized access' });
    }
    expect((await getJson(app, undefined, '/api/images/my-images')).status).toBe(401);
    const foreign = await fetch(`${app.url}/api/stability-ultra/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example', cookie: user.jar.header() },
      body: JSON.stringify({ prompt: 'ok', aspect_ratio: '1:1' }),
    });
    expect(foreign.status).toBe(403);
    expect(await requestsOf(app, user)).toEqual([]);
  });

  it('answers 402 with SPEC text when the balance is below the cost, storing nothing', async () => {
    const poor = await newUser();
    for (let i = 0; i < 3; i += 1) {
      const { status } = await postJson(app, poor, '/api/stability-ultra/generate', {
        prompt: `p${i}`,
        aspect_ratio: '1:1',
      });
      expect(status).toBe(200);
    }
    const { status, body } = await postJson(app, poor, '/api/stability-ultra/generate', {
      prompt: 'more',
      aspect_ratio: '1:1',
    });
    expect(status).toBe(402);
    expect(body).toMatchObject({
      success: false,
      code: 'INSUFFICIENT_TOKENS',
      message: 'Insufficient tokens. Need 16 tokens but only have 2',
      // DESIGN "Errors": a refused charge states the cost and the current balance.
      details: { balance: 2, cost: 16 },
    });
    expect(await balance(app, poor)).toBe(2);
    expect((await requestsOf(app, poor)).map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    expect(await imagesOf(app, poor)).toHaveLength(3);
    // Still enough for original (2 tokens), then exactly 0.
    expect(
      (await postJson(app, poor, '/api/stability/text-to-image', { prompt: 'last', width: 1024, height: 1024 })).status,
    ).toBe(200);
    expect(await balance(app, poor)).toBe(0);
    await expectLedgerConsistent(app, poor);
    await expectStorageMatchesRows(app);
  });

  it('pages my-images newest first and shows each user only their own', async () => {
    const anna = await newUser();
    const boris = await newUser();
    for (const prompt of ['first', 'second', 'third']) {
      expect(
        (await postJson(app, anna, '/api/stability/text-to-image', { prompt, width: 1024, height: 1024 })).status,
      ).toBe(200);
    }
    expect(
      (await postJson(app, boris, '/api/stability/text-to-image', { prompt: 'boris', width: 1024, height: 1024 }))
        .status,
    ).toBe(200);

    const first = await getJson(app, anna, '/api/images/my-images?page=1&limit=2');
    expect(first.status).toBe(200);
    const page1 = first.body.data as { images: Array<{ prompt: string; userId: number }>; pagination: unknown };
    expect(first.body.success).toBe(true);
    expect(page1.images.map((i) => i.prompt)).toEqual(['third', 'second']);
    expect(page1.pagination).toEqual({ currentPage: 1, totalPages: 2, total: 3, hasNext: true, hasPrev: false });
    const second = (await getJson(app, anna, '/api/images/my-images?page=2&limit=2')).body.data as typeof page1;
    expect(second.images.map((i) => i.prompt)).toEqual(['first']);
    expect(second.pagination).toEqual({ currentPage: 2, totalPages: 2, total: 3, hasNext: false, hasPrev: true });
    const defaults = (await getJson(app, anna, '/api/images/my-images')).body.data as typeof page1;
    expect(defaults.images).toHaveLength(3);
    expect(defaults.pagination).toMatchObject({ currentPage: 1, totalPages: 1 });

    const borisPage = (await getJson(app, boris, '/api/images/my-images?limit=6')).body.data as typeof page1;
    expect(borisPage.images.map((i) => i.prompt)).toEqual(['boris']);
    expect(borisPage.images.every((i) => i.userId === boris.id)).toBe(true);

    for (const query of ['page=0', 'page=x', 'limit=0', 'limit=101', 'limit=2.5']) {
      const bad = await getJson(app, anna, `/api/images/my-images?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    }
  });

  it('serves only well-formed image names, with the right headers', async () => {
    const owner = await newUser();
    const { body } = await postJson(app, owner, '/api/stability-core/generate', {
      prompt: 'served',
      aspect_ratio: '1:1',
    });
    const fileName = (body.data as { fileName: string }).fileName;
    const ok = await fetch(`${app.url}/images/${fileName}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('image/png');
    expect(ok.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect(ok.headers.get('x-content-type-options')).toBe('nosniff');
    await ok.arrayBuffer();
    for (const name of [
      fileName.toUpperCase(),
      fileName.replace('.png', '.exe'),
      `${fileName.slice(0, 31)}.png`,
      '..%2F..%2Fetc%2Fpasswd',
      '..%2Fdb%2Fpostmaster.pid',
      `${'0'.repeat(32)}.png`,
      `${fileName}.png`,
    ]) {
      const response = await fetch(`${app.url}/images/${name}`);
      expect(response.status, name).toBe(404);
      expect(await response.json()).toMatchObject({ success: false, code: 'NOT_FOUND' });
    }
  });

  it('refunds PENDING generations abandoned by a crash, once', async () => {
    const victim = await newUser();
    const { ledger, images } = app.services;
    const abandon = async (ageMs: number) => {
      const createdAt = new Date(Date.now() - ageMs);
      return ledger.transaction(async (tx) => {
        const [row] = await tx
          .insert(generationRequests)
          .values({
            userId: victim.id,
            model: 'core',
            prompt: 'lost',
            width: 1280,
            height: 1280,
            steps: 0,
            cost: 6,
            createdAt,
            // A worker had taken it (jobs still in line are not abandoned: any instance takes them).
            startedAt: createdAt,
            heartbeatAt: createdAt,
          })
          .returning();
        if (!row) throw new Error('no row');
        await ledger.charge(
          { userId: victim.id, amount: 6, reason: 'generation_charge', idempotencyKey: `generation:${row.id}:charge` },
          () => 'insufficient',
          tx,
        );
        return row;
      });
    };
    // The heartbeat stopped with the process that crashed; how long ago decides.
    const limitMs = LIVENESS.staleAfterMs;
    const old = await abandon(limitMs + 60_000);
    const fresh = await abandon(1000);
    expect(await balance(app, victim)).toBe(38);

    expect(await images.reconcile()).toBeGreaterThanOrEqual(1);
    expect(await balance(app, victim)).toBe(44);
    const rows = await requestsOf(app, victim);
    expect(rows.find((r) => r.id === old.id)).toMatchObject({ status: 'FAILED' });
    expect(rows.find((r) => r.id === fresh.id)).toMatchObject({ status: 'PENDING' });
    await images.reconcile();
    expect(await balance(app, victim)).toBe(44);
    // Once the fresh one is past the limit too, it is refunded as well.
    await images.reconcile(-5000);
    expect(await balance(app, victim)).toBe(50);
    await expectLedgerConsistent(app, victim);
  });
});

/**
 * Issue #25 item 10: SPEC section 5 lets the form send seeds 0 to 4294967295. Stability's
 * v1 SDXL text-to-image takes that whole range; its v2beta stable-image endpoints (ultra,
 * core, sd3) take 0 to 4294967294 (PROVIDERS.md, from Stability's API reference), so the
 * top seed sent as is was charged, refused by Stability and refunded. It is now sent as
 * 4294967294 (docs/screens.md, the dashboard's seed): charged once, generated, never refunded.
 */
describe.each(testDatabases())('the top seed against Stability on $name', (kind) => {
  const API_KEY = 'test-stability-key';
  const V1_SEED_MAX = 4294967295;
  const V2BETA_SEED_MAX = 4294967294;
  let fake: FakeStability;
  let app: TestApp;
  beforeAll(async () => {
    fake = await startFakeStability({ apiKey: API_KEY });
    const provider = createStabilityImageProvider({ apiKey: API_KEY, baseUrl: fake.url, timeoutMs: 5000 });
    app = await startTestApp(kind, {}, {}, { providers: { images: provider } });
  });
  afterAll(async () => {
    await app.close();
    await fake.close();
  });

  it.each([
    { model: 'ultra', body: { aspect_ratio: '1:1' } },
    { model: 'core', body: { aspect_ratio: '1:1' } },
    { model: 'sd3', body: { aspect_ratio: '1:1', model: 'sd3.5-medium' } },
  ] as const)(
    '$model: seed 4294967295 goes to Stability within its range and is charged once',
    async ({ model, body }) => {
      fake.reset();
      const user = await signedInUser(app, `top-seed-${model}-${kind.name}@example.com`);
      const reply = await postJson(app, user, IMAGE_MODELS[model].endpoint, {
        prompt: 'a lighthouse',
        seed: 4294967295,
        ...body,
      });
      expect(reply.status).toBe(200);
      const sent = fake.requests.map((request) => Number(request.fields?.seed));
      expect(sent).toHaveLength(1);
      expect(sent[0]).toBeGreaterThanOrEqual(0);
      expect(sent[0]).toBeLessThanOrEqual(V2BETA_SEED_MAX);
      expect(sent[0]).toBe(V2BETA_SEED_MAX);
      expect((reply.body.data as { seed: number }).seed).toBe(V2BETA_SEED_MAX);
      const ledger = await app.database.db.select().from(tokenLedger).where(eq(tokenLedger.userId, user.id));
      expect(ledger.map((row) => row.delta).sort((a, b) => a - b)).toEqual([-IMAGE_MODELS[model].cost, 50]);
      expect((await requestsOf(app, user)).map((r) => r.status)).toEqual(['COMPLETED']);
      await expectLedgerConsistent(app, user);
    },
  );

  it('original (v1 SDXL) takes seed 4294967295 as is', async () => {
    fake.reset();
    const user = await signedInUser(app, `top-seed-original-${kind.name}@example.com`);
    const reply = await postJson(app, user, IMAGE_MODELS.original.endpoint, {
      prompt: 'a lighthouse',
      seed: 4294967295,
      width: 1024,
      height: 1024,
    });
    expect(reply.status).toBe(200);
    expect(fake.requests.map((request) => (request.json as { seed?: number }).seed)).toEqual([V1_SEED_MAX]);
  });
});
