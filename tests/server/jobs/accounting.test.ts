import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generationRequests } from '../../../server/db/schema';
import { localBus } from '../../../server/events/bus';
import { entriesFor } from '../../../server/ledger/repository';
import { pglite, startTestApp, type TestApp, type TestDatabaseKind } from '../helpers';
import { until } from '../chat/helpers';
import { balance, expectLedgerConsistent, postJson, signedInUser, spend } from '../images/support';
import { METRICS_TOKEN, metricsWatch } from '../metrics';
import { facePhoto, postPortrait } from '../portraits/support';
import { heldImageProvider, jobIdOf, ORIGINAL_COST, postOriginal } from './support';

// docs/operations.md item 7: /metrics counts "generations and portraits by model and outcome,
// tokens charged and refunded by reason, ... reconciler actions". An operator's dashboards and
// alerts read these series, so each job is counted once, under its own model and reason.

const PORTRAIT_COST = 12;
const STARTER = 50;
const SERIES = [
  'imagegen_generations_total',
  'imagegen_portraits_total',
  'imagegen_tokens_charged_total',
  'imagegen_tokens_refunded_total',
  'imagegen_reconciler_actions_total',
];

describe('what /metrics counts of jobs (docs/operations.md, "Metrics")', () => {
  let app: TestApp;
  let provider: ReturnType<typeof heldImageProvider>;
  let logins = 0;
  const newUser = () => signedInUser(app, `accounting-${(logins += 1)}@example.com`);

  beforeAll(async () => {
    provider = heldImageProvider();
    app = await startTestApp(
      pglite,
      { JOBS_PER_USER: '1', JOBS_SLOTS_IMAGES: '1', STARTER_TOKENS: String(STARTER), METRICS_TOKEN },
      {},
      { providers: { images: provider } },
    );
  });
  afterEach(() => provider.releaseAll());
  afterAll(async () => {
    provider.releaseAll();
    await app.close();
  });

  it('a job that completes: one completed generation of its model, and its cost charged', async () => {
    const user = await newUser();
    const watch = await metricsWatch(app, SERIES);
    const done = postOriginal(app, user, 'completes');
    await until(async () => (provider.held.length === 1 ? true : undefined));
    provider.releaseAll();
    expect((await done).status).toBe(200);
    expect(await watch.moved()).toEqual({
      imagegen_generations_total: { 'model="original",outcome="completed"': 1 },
      imagegen_tokens_charged_total: { 'reason="generation_charge"': ORIGINAL_COST },
    });
  });

  it('refused jobs, over the per-user limit or the balance: each one refused generation or portrait, nothing charged', async () => {
    const user = await newUser();
    const first = postOriginal(app, user, 'holds the one place');
    await until(async () => (provider.held.length === 1 ? true : undefined));
    const watch = await metricsWatch(app, SERIES);
    expect((await postOriginal(app, user, 'over the limit')).status).toBe(429);
    const poor = await newUser();
    await spend(app, poor, STARTER - 1);
    expect((await postOriginal(app, poor, 'cannot pay')).body).toMatchObject({ code: 'INSUFFICIENT_TOKENS' });
    const portrait = await postPortrait(app, poor, {
      fields: { prompt: 'cannot pay either' },
      files: [{ bytes: await facePhoto(), name: 'me.jpg' }],
    });
    expect(portrait.body).toMatchObject({ code: 'INSUFFICIENT_TOKENS' });
    expect(await watch.moved()).toEqual({
      imagegen_generations_total: { 'model="original",outcome="refused"': 2 },
      imagegen_portraits_total: { 'model="portrait",outcome="refused"': 1 },
    });
    provider.releaseAll();
    await first;
  });

  it('a job cancelled at its provider: one failed generation, its cost refunded', async () => {
    const user = await newUser();
    const done = postOriginal(app, user, 'cancelled running');
    await until(async () => (provider.held.length === 1 ? true : undefined));
    const id = await jobIdOf(app, user, 'cancelled running');
    const watch = await metricsWatch(app, SERIES);
    expect((await postJson(app, user, `/api/jobs/${id}/cancel`, {})).status).toBe(200);
    expect((await done).status).toBe(409);
    expect(await watch.moved()).toEqual({
      imagegen_generations_total: { 'model="original",outcome="failed"': 1 },
      imagegen_tokens_refunded_total: { 'reason="generation_refund"': ORIGINAL_COST },
    });
  });

  it('a job cancelled in line: its cost refunded, nothing counted as completed', async () => {
    const holder = await newUser();
    const held = postOriginal(app, holder, 'keeps the slot');
    await until(async () => (provider.held.length === 1 ? true : undefined));
    const user = await newUser();
    const waiting = postOriginal(app, user, 'cancelled in line');
    const id = await jobIdOf(app, user, 'cancelled in line');
    const watch = await metricsWatch(app, SERIES);
    expect((await postJson(app, user, `/api/jobs/${id}/cancel`, {})).status).toBe(200);
    expect((await waiting).status).toBe(409);
    const moved = await watch.moved();
    expect(moved.imagegen_tokens_refunded_total).toEqual({ 'reason="generation_refund"': ORIGINAL_COST });
    expect(moved.imagegen_generations_total?.['model="original",outcome="completed"']).toBeUndefined();
    provider.releaseAll();
    await held;
  });

  it('a portrait: counted under portraits, its cost charged as a portrait', async () => {
    const user = await newUser();
    const watch = await metricsWatch(app, SERIES);
    const reply = await postPortrait(app, user, {
      fields: { prompt: 'a portrait' },
      files: [{ bytes: await facePhoto(), name: 'me.jpg' }],
    });
    expect(reply.status).toBe(200);
    expect(await watch.moved()).toEqual({
      imagegen_portraits_total: { 'model="portrait",outcome="completed"': 1 },
      imagegen_tokens_charged_total: { 'reason="portrait_charge"': PORTRAIT_COST },
    });
  });
});

describe('the generation reconciler on its timer (GENERATION_RECONCILE_INTERVAL_MS)', () => {
  it('refunds a job that waited too long in line, and counts it and logs it once', async () => {
    const lines: Array<{ level: number; msg?: string; refunded?: number }> = [];
    // This instance takes no jobs, so what it accepts stays in line until the deadline.
    const app = await startTestApp(
      pglite,
      {
        JOBS_PER_INSTANCE: '0',
        JOBS_QUEUE_TIMEOUT_MS: '1000',
        GENERATION_RECONCILE_INTERVAL_MS: '100',
        LOG_LEVEL: 'warn',
        METRICS_TOKEN,
      },
      {},
      {
        logStream: {
          write: (chunk: string) => {
            for (const line of chunk.split('\n')) if (line.trim()) lines.push(JSON.parse(line) as (typeof lines)[0]);
          },
        },
      },
    );
    try {
      const user = await signedInUser(app, 'reconciled@example.com');
      const watch = await metricsWatch(app, SERIES);
      const reply = await postOriginal(app, user, 'waits past the deadline');
      expect(reply.status).toBe(503);
      expect(reply.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      expect(await balance(app, user)).toBe(STARTER);
      const moved = await watch.moved();
      expect(moved.imagegen_reconciler_actions_total).toEqual({ 'reconciler="generation",action="refunded"': 1 });
      expect(moved.imagegen_tokens_refunded_total).toEqual({ 'reason="generation_refund"': ORIGINAL_COST });
      const told = lines.filter((line) => line.msg === 'refunded abandoned generations');
      expect(told).toMatchObject([{ level: 40, refunded: 1 }]);
    } finally {
      await app.close();
    }
  });
});

describe('a job this instance cannot run', () => {
  it('a request from before jobs were durable (no input stored) is failed and refunded, not run', async () => {
    const database = await pglite.open();
    const shared: TestDatabaseKind = { name: 'pglite', open: async () => database };
    const bus = localBus();
    const provider = heldImageProvider();
    // The first instance takes no jobs: the request waits in line.
    const first = await startTestApp(shared, { JOBS_PER_INSTANCE: '0', STARTER_TOKENS: String(STARTER) }, {}, { bus });
    const user = await signedInUser(first, 'before-durable@example.com');
    const waiting = postOriginal(first, user, 'from an older release');
    const id = await jobIdOf(first, user, 'from an older release');
    await database.db
      .update(generationRequests)
      .set({ input: sql`null` })
      .where(eq(generationRequests.id, id));

    const second = await startTestApp(shared, {}, {}, { bus, providers: { images: provider } });
    try {
      const reply = await waiting;
      expect(reply.status).toBe(500);
      expect(reply.body).toMatchObject({ success: false, code: 'INTERNAL' });
      const [row] = await database.db.select().from(generationRequests).where(eq(generationRequests.id, id));
      expect(row).toMatchObject({ status: 'FAILED', errorCode: 'INTERNAL', errorMessage: 'The job could not be run' });
      expect(provider.started).toEqual([]);
      expect(await balance(second, user)).toBe(STARTER);
      const entries = await entriesFor(database.db, user.id);
      expect(entries.filter((e) => e.reason === 'generation_refund')).toHaveLength(1);
      await expectLedgerConsistent(second, user);
    } finally {
      await first.server.close();
      await second.close();
    }
  });
});
