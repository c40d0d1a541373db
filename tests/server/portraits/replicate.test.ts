import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { balance, expectLedgerConsistent, expectStorageMatchesRows, requestsOf, signedInUser } from '../images/support';
import { startFakeReplicate, type FakeReplicate } from '../providers/portraits/fake-replicate';
import { facePhoto, postPortrait } from './support';

const TOKEN = 'r8_test_token';

describe.each(testDatabases())('portraits through Replicate on $name', (kind) => {
  let fake: FakeReplicate;
  let app: TestApp;
  let photo: Buffer;
  let logins = 0;

  beforeAll(async () => {
    fake = await startFakeReplicate(TOKEN);
    photo = await facePhoto();
    app = await startTestApp(kind, {
      REPLICATE_API_TOKEN: TOKEN,
      REPLICATE_BASE_URL: fake.url,
      REPLICATE_TIMEOUT_MS: '1500',
      REPLICATE_POLL_INTERVAL_MS: '50',
    });
  });
  afterEach(() => {
    fake.reset();
  });
  afterAll(async () => {
    await app.close();
    await fake.close();
  });

  const newUser = () => signedInUser(app, `replicate-${kind.name}-${(logins += 1)}@example.com`);
  const post = (user: Awaited<ReturnType<typeof newUser>>) =>
    postPortrait(app, user, {
      fields: {
        prompt: 'A knight in armour',
        aspect_ratio: '2:3',
        style_preset: 'photographic',
        output_format: 'webp',
      },
      files: [{ bytes: photo, name: 'me.jpg' }],
    });

  it.each(['succeed', 'succeed-after-polls'] as const)(
    '%s: sends the model input, downloads the output it serves, stores it as WebP',
    async (behaviour) => {
      fake.behaviour = behaviour;
      const user = await newUser();
      const { status, body } = await post(user);
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ success: true, tokens: { charged: 12 } });
      const create = fake.requests.find((r) => r.method === 'POST');
      expect(create?.path).toBe('/v1/models/black-forest-labs/flux-kontext-pro/predictions');
      expect(create?.headers.prefer).toMatch(/^wait=\d+$/);
      // Replicate's own deadline (changelog 2025-10-16 "Set deadlines for predictions":
      // `Cancel-After: 1m`): at our wait limit Replicate stops a prediction we lost track of.
      expect(create?.headers['cancel-after']).toBe('5s');
      const input = (create?.body as { input: Record<string, string> }).input;
      expect(Object.keys(input).sort()).toEqual(['aspect_ratio', 'input_image', 'output_format', 'prompt']);
      expect(input).toMatchObject({ prompt: 'A knight in armour', aspect_ratio: '2:3', output_format: 'png' });
      // The photo goes as a data URI of our re-encoded JPEG, never as an address.
      expect(input.input_image).toMatch(/^data:image\/jpeg;base64,\/9j\//);
      expect(fake.requests.some((r) => r.path.startsWith('/files/'))).toBe(true);
      if (behaviour === 'succeed-after-polls') {
        expect(fake.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/predictions/')).length).toBe(2);
      }
      const stored = Buffer.from(await (await fetch((body.data as { url: string }).url)).arrayBuffer());
      const meta = await sharp(stored).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', 832, 1216]);
      expect(await balance(app, user)).toBe(38);
      await expectLedgerConsistent(app, user);
    },
  );

  it.each([
    ['fail', 502, 'PROVIDER_ERROR', 'Face-swap generation failed'],
    ['nsfw', 422, 'CONTENT_FILTERED', undefined],
    ['cancel', 502, 'PROVIDER_ERROR', 'Face-swap generation failed'],
    ['invalid-input', 502, 'PROVIDER_ERROR', 'Face-swap generation failed'],
    ['rate-limited', 429, 'RATE_LIMITED', undefined],
    ['malformed', 502, 'PROVIDER_ERROR', 'Face-swap generation failed'],
    ['foreign-output', 502, 'PROVIDER_ERROR', 'Face-swap generation failed'],
  ] as const)('%s: answers %i %s and refunds', async (behaviour, status, code, message) => {
    fake.behaviour = behaviour;
    const user = await newUser();
    const result = await post(user);
    expect(result.status, JSON.stringify(result.body)).toBe(status);
    expect(result.body).toMatchObject({ success: false, code });
    if (message) expect(result.body.message).toBe(message);
    // Never a download from an address the answer made up.
    expect(fake.requests.some((r) => r.path.includes('meta-data'))).toBe(false);
    expect(await balance(app, user)).toBe(50);
    const [request] = await requestsOf(app, user);
    expect(request).toMatchObject({ model: 'portrait', status: 'FAILED' });
    await expectLedgerConsistent(app, user);
    await expectStorageMatchesRows(app);
  });

  it('cancels a prediction that never finishes, and refunds', async () => {
    fake.behaviour = 'never-finish';
    const user = await newUser();
    const result = await post(user);
    expect(result.status).toBe(504);
    expect(result.body).toMatchObject({ code: 'PROVIDER_TIMEOUT' });
    expect(fake.cancelled.length).toBeGreaterThanOrEqual(1);
    expect(await balance(app, user)).toBe(50);
    await expectLedgerConsistent(app, user);
  });
});
