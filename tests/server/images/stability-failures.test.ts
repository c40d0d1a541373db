import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MODELS, type ImageModelId } from '../../../src/domain/images';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { changes, METRICS_TOKEN, metricSamples } from '../metrics';
import {
  startFakeStability,
  type FakeStability,
  type FakeStabilityBehaviour,
} from '../providers/images/fake-stability';
import {
  expectLedgerConsistent,
  getJson,
  imagesOf,
  postJson,
  requestsOf,
  signedInUser,
  type TestUser,
} from './support';

/**
 * Issue #25 "Money at the edges", Stability's failures end to end: the fake answers with
 * the shapes Stability's API reference publishes (fake-stability.ts names the source of
 * each), and for every failure the user gets SPEC's status and text, the ledger shows one
 * charge and one refund (read through GET /auth/me and GET /api/ledger, as the user would),
 * and /metrics counts the failed call once in imagegen_provider_errors_total under
 * provider="stability" and the failure's kind.
 */

const API_KEY = 'test-stability-key';
// The smallest timeout config allows; the service's own deadline is the same setting.
const TIMEOUT_MS = 1000;
const STARTER = 50;

const bodies: Record<ImageModelId, Record<string, unknown>> = {
  original: { prompt: 'a lighthouse at dusk', width: 1024, height: 1024 },
  ultra: { prompt: 'a lighthouse at dusk', aspect_ratio: '16:9' },
  core: { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1' },
  sd3: { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1', model: 'sd3.5-medium' },
};

interface LedgerEntry {
  delta: number;
  kind: string;
}

/** The balance and the ledger, through the app's own API (the ledger lists newest first). */
async function money(app: TestApp, user: TestUser): Promise<{ balance: number; entries: LedgerEntry[] }> {
  const me = await getJson(app, user, '/auth/me');
  const ledger = await getJson(app, user, '/api/ledger?page=1&limit=50');
  return {
    balance: (me.body.data as { tokensAmount: number }).tokensAmount,
    entries: (ledger.body.data as { entries: LedgerEntry[] }).entries.map(({ delta, kind }) => ({ delta, kind })),
  };
}

/** Every imagegen_provider_errors_total{provider="stability"} series, by kind, from /metrics. */
async function stabilityErrors(app: TestApp): Promise<Record<string, number>> {
  const samples = await metricSamples(app, 'imagegen_provider_errors_total');
  return Object.fromEntries(
    Object.entries(samples)
      .filter(([labels]) => labels.includes('provider="stability"'))
      .map(([labels, value]) => [/kind="([^"]+)"/.exec(labels)?.[1] ?? '?', value]),
  );
}

interface FailureCase {
  name: string;
  model: ImageModelId;
  behaviour: FakeStabilityBehaviour;
  status: number;
  code: string;
  message: string;
  /** The kind imagegen_provider_errors_total counts it under. */
  metric: string;
}

// What the user gets comes from SPEC section 8 ("Generation failed", "<Model> generation
// failed", the server's message when present) and the error catalogue's codes; the provider
// shapes from Stability's reference (fake-stability.ts).
const failures: FailureCase[] = [
  {
    name: 'v2beta 403 content_moderation',
    model: 'core',
    behaviour: { kind: 'error', status: 403 },
    status: 422,
    code: 'CONTENT_FILTERED',
    message: 'The request was blocked by the content filter',
    metric: 'refused',
  },
  {
    name: 'a 200 whose finish reason is CONTENT_FILTERED',
    model: 'sd3',
    behaviour: { kind: 'content-filtered' },
    status: 422,
    code: 'CONTENT_FILTERED',
    message: 'The request was blocked by the content filter',
    metric: 'refused',
  },
  {
    name: 'v2beta 413 payload_too_large',
    model: 'core',
    behaviour: { kind: 'error', status: 413 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'body: payloads cannot be larger than 10MiB in size',
    metric: 'refused',
  },
  {
    name: 'v2beta 422 invalid_language',
    model: 'ultra',
    behaviour: { kind: 'error', status: 422 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'English is the only supported language for this service.',
    metric: 'refused',
  },
  {
    name: 'v2beta 400 bad_request',
    model: 'sd3',
    behaviour: { kind: 'error', status: 400 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'some-field: is required',
    metric: 'refused',
  },
  {
    name: 'v2beta 401 (our key), without Stability’s wording',
    model: 'sd3',
    behaviour: { kind: 'error', status: 401 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'SD3 generation failed',
    metric: 'refused',
  },
  {
    name: 'v1 401 (our key)',
    model: 'original',
    behaviour: { kind: 'error', status: 401 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'Generation failed',
    metric: 'refused',
  },
  {
    name: 'v1 403 permission_denied',
    model: 'original',
    behaviour: { kind: 'error', status: 403 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'Generation failed',
    metric: 'refused',
  },
  {
    name: 'v2beta 402 payment_required (our account)',
    model: 'ultra',
    behaviour: { kind: 'error', status: 402 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'Ultra generation failed',
    metric: 'quota',
  },
  {
    name: 'v2beta 429 rate_limit_exceeded',
    model: 'core',
    behaviour: { kind: 'error', status: 429 },
    status: 429,
    code: 'RATE_LIMITED',
    message: 'Please try again later',
    metric: 'rate_limited',
  },
  {
    name: 'v1 429',
    model: 'original',
    behaviour: { kind: 'error', status: 429 },
    status: 429,
    code: 'RATE_LIMITED',
    message: 'Please try again later',
    metric: 'rate_limited',
  },
  {
    name: 'v2beta 500 internal_error',
    model: 'core',
    behaviour: { kind: 'error', status: 500 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'Core generation failed',
    metric: 'server_error',
  },
  {
    name: 'v1 500 server_error',
    model: 'original',
    behaviour: { kind: 'error', status: 500 },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'Generation failed',
    metric: 'server_error',
  },
  {
    name: 'a proxy’s 502 in HTML',
    model: 'ultra',
    behaviour: { kind: 'error', status: 502, body: '<html>502 Bad Gateway</html>', contentType: 'text/html' },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'Ultra generation failed',
    metric: 'server_error',
  },
  {
    name: 'a 503 with an empty body',
    model: 'sd3',
    behaviour: { kind: 'error', status: 503, body: '', contentType: 'text/plain' },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'SD3 generation failed',
    metric: 'server_error',
  },
  {
    name: 'no answer within the timeout',
    model: 'ultra',
    behaviour: { kind: 'slow', delayMs: TIMEOUT_MS * 5 },
    status: 504,
    code: 'PROVIDER_TIMEOUT',
    message: 'Please try again later',
    metric: 'timeout',
  },
  {
    name: 'a cut connection',
    model: 'core',
    behaviour: { kind: 'drop-connection' },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'Core generation failed',
    metric: 'network',
  },
  {
    name: 'a v1 finish reason ERROR',
    model: 'original',
    behaviour: { kind: 'success', finishReason: 'ERROR' },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'Generation failed',
    metric: 'invalid_response',
  },
  {
    name: 'an image cut short',
    model: 'sd3',
    behaviour: { kind: 'malformed', variant: 'truncated-image' },
    status: 502,
    code: 'PROVIDER_ERROR',
    message: 'SD3 generation failed',
    metric: 'invalid_response',
  },
];

describe.each(testDatabases())('Stability failures: the user, the ledger and /metrics on $name', (kind) => {
  let fake: FakeStability;
  let app: TestApp;
  let logins = 0;

  beforeAll(async () => {
    fake = await startFakeStability({ apiKey: API_KEY });
    // The app's own Stability adapter, built from its configuration.
    app = await startTestApp(kind, {
      STABILITY_API_KEY: API_KEY,
      STABILITY_BASE_URL: fake.url,
      STABILITY_TIMEOUT_MS: String(TIMEOUT_MS),
      METRICS_TOKEN,
    });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await app.close();
    await fake.close();
  });

  const newUser = () => signedInUser(app, `stability-failure-${kind.name}-${(logins += 1)}@example.com`);

  it.each(failures)(
    '$name: $status "$message", one charge and one refund, counted as $metric',
    async ({ model, behaviour, status, code, message, metric }) => {
      const user = await newUser();
      const cost = IMAGE_MODELS[model].cost;
      const before = await money(app, user);
      expect(before.balance).toBe(STARTER);
      const errorsBefore = await stabilityErrors(app);
      fake.setBehaviour(behaviour);

      const reply = await postJson(app, user, IMAGE_MODELS[model].endpoint, bodies[model]);

      expect(reply.status, JSON.stringify(reply.body)).toBe(status);
      expect(reply.body).toMatchObject({ success: false, code, message });
      // One call: a failed generation is never sent twice.
      expect(fake.requests).toHaveLength(1);
      const after = await money(app, user);
      expect(after.balance).toBe(STARTER);
      expect(after.entries.slice(0, after.entries.length - before.entries.length)).toEqual([
        { delta: cost, kind: 'refund' },
        { delta: -cost, kind: 'image' },
      ]);
      const [request] = await requestsOf(app, user);
      expect(request).toMatchObject({ status: 'FAILED', errorMessage: message });
      expect(await imagesOf(app, user)).toEqual([]);
      await expectLedgerConsistent(app, user);
      // Counted once, under its kind and no other.
      expect(changes(errorsBefore, await stabilityErrors(app))).toEqual({ [metric]: 1 });
    },
  );

  it.each(['original', 'ultra'] as const)(
    'a %s generation that succeeds is charged once and counts no error',
    async (model) => {
      const user = await newUser();
      const errorsBefore = await stabilityErrors(app);
      const before = await money(app, user);
      const reply = await postJson(app, user, IMAGE_MODELS[model].endpoint, bodies[model]);
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const after = await money(app, user);
      expect(after.balance).toBe(STARTER - IMAGE_MODELS[model].cost);
      expect(after.entries.slice(0, after.entries.length - before.entries.length)).toEqual([
        { delta: -IMAGE_MODELS[model].cost, kind: 'image' },
      ]);
      expect(await imagesOf(app, user)).toHaveLength(1);
      expect(changes(errorsBefore, await stabilityErrors(app))).toEqual({});
    },
  );
});
