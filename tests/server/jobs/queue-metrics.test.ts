import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generationRequests } from '../../../server/db/schema';
import type { ImageProvider } from '../../../server/providers/images/types';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { until } from '../chat/helpers';
import { postJson, signedInUser, type TestUser } from '../images/support';
import { METRICS_TOKEN, metricSamples, metricsWatch } from '../metrics';
import { facePhoto, postPortrait } from '../portraits/support';
import { heldImageProvider, jobIdOf, postOriginal } from './support';

/**
 * Issue #42: /metrics shows the queue. Per lane, the jobs waiting in line, how long the oldest
 * of them has waited, and the jobs running; and what became of jobs, counted: completed,
 * failed, cancelled, refunded by the reconciler. Real jobs go through the HTTP API.
 */

const FINISHED = 'imagegen_jobs_finished_total';
const LANES = ['images', 'portraits'] as const;

/** The queue's three gauges as one scrape after another reads them, per lane. */
async function queueNow(app: TestApp) {
  const read = async (name: string) => {
    const samples = await metricSamples(app, name);
    return Object.fromEntries(LANES.map((lane) => [lane, samples[`lane="${lane}"`]]));
  };
  return {
    queued: await read('imagegen_jobs_queued'),
    running: await read('imagegen_jobs_running'),
    oldestWait: await read('imagegen_jobs_oldest_wait_seconds'),
  };
}

const idle = { images: 0, portraits: 0 };

function portraitOf(app: TestApp, user: TestUser, prompt: string) {
  return facePhoto().then((bytes) =>
    postPortrait(app, user, { fields: { prompt }, files: [{ bytes, name: 'me.jpg' }] }),
  );
}

describe.each(testDatabases())('the queue in /metrics on $name', { timeout: 120_000 }, (kind) => {
  describe('jobs in line', () => {
    let app: TestApp;
    beforeAll(async () => {
      // This instance takes no jobs: what it accepts waits in line.
      app = await startTestApp(kind, { JOBS_PER_INSTANCE: '0', JOBS_QUEUE_TIMEOUT_MS: '60000', METRICS_TOKEN });
    });
    afterAll(async () => {
      await app.close();
    });

    it('shows the depth and the oldest wait of each lane; a cancel in line and a refund by the reconciler are counted', async () => {
      const user = await signedInUser(app, 'in-line@example.com');
      expect(await queueNow(app)).toEqual({ queued: idle, running: idle, oldestWait: idle });
      const watch = await metricsWatch(app, [FINISHED]);

      const since = Date.now();
      const first = postOriginal(app, user, 'first in line');
      const firstId = await jobIdOf(app, user, 'first in line');
      const second = postOriginal(app, user, 'second in line');
      const secondId = await jobIdOf(app, user, 'second in line');
      // It waits in line until the app closes, which cuts its request.
      void portraitOf(app, user, 'a portrait in line').catch(() => undefined);
      await jobIdOf(app, user, 'a portrait in line');
      // The first has waited a minute and a half, by the database's clock.
      const backdated = Date.now();
      await app.database.db
        .update(generationRequests)
        .set({ createdAt: sql`now() - interval '90 seconds'` })
        .where(eq(generationRequests.id, firstId));

      const inLine = await queueNow(app);
      const read = Date.now();
      expect(inLine.queued).toEqual({ images: 2, portraits: 1 });
      expect(inLine.running).toEqual(idle);
      expect(inLine.oldestWait.images).toBeGreaterThanOrEqual(90);
      expect(inLine.oldestWait.images).toBeLessThanOrEqual(90 + (read - backdated) / 1000 + 1);
      expect(inLine.oldestWait.portraits).toBeGreaterThan(0);
      expect(inLine.oldestWait.portraits).toBeLessThanOrEqual((read - since) / 1000 + 1);

      expect((await postJson(app, user, `/api/jobs/${secondId}/cancel`, {})).status).toBe(200);
      expect((await second).status).toBe(409);
      // Past JOBS_QUEUE_TIMEOUT_MS: the reconciler refunds it; the portrait has not waited that long.
      expect(await app.services.jobs.reconcile()).toBe(1);
      expect((await first).status).toBe(503);

      expect(await queueNow(app)).toMatchObject({ queued: { images: 0, portraits: 1 }, running: idle });
      expect((await queueNow(app)).oldestWait.images).toBe(0);
      expect(await watch.moved()).toEqual({
        [FINISHED]: { 'lane="images",outcome="cancelled"': 1, 'lane="images",outcome="refunded"': 1 },
      });
    });
  });

  describe('jobs that run', () => {
    let app: TestApp;
    const held = heldImageProvider();
    // Stability's answer to a prompt its filter blocks: a blurred picture, finishReason CONTENT_FILTERED.
    const provider: ImageProvider = {
      name: held.name,
      async generate(job) {
        const result = await held.generate(job);
        return job.prompt.startsWith('blocked') ? { ...result, finishReason: 'CONTENT_FILTERED' } : result;
      },
    };
    beforeAll(async () => {
      app = await startTestApp(kind, { METRICS_TOKEN }, {}, { providers: { images: provider } });
    });
    afterEach(() => held.releaseAll());
    afterAll(async () => {
      held.releaseAll();
      await app.close();
    });

    it('shows the running jobs of each lane; completed, failed and cancelled jobs are counted once each', async () => {
      const user = await signedInUser(app, 'runs@example.com');
      const watch = await metricsWatch(app, [FINISHED]);
      const completes = postOriginal(app, user, 'completes');
      const blocked = postOriginal(app, user, 'blocked by the filter');
      const cancelled = postOriginal(app, user, 'cancelled while running');
      await until(async () => (held.held.length === 3 ? true : undefined));
      expect(await queueNow(app)).toEqual({ queued: idle, running: { images: 3, portraits: 0 }, oldestWait: idle });

      const id = await jobIdOf(app, user, 'cancelled while running');
      expect((await postJson(app, user, `/api/jobs/${id}/cancel`, {})).status).toBe(200);
      expect((await cancelled).status).toBe(409);
      held.releaseAll();
      expect((await completes).status).toBe(200);
      expect((await blocked).status).toBe(422);
      expect((await portraitOf(app, user, 'a portrait')).status).toBe(200);

      expect(await queueNow(app)).toEqual({ queued: idle, running: idle, oldestWait: idle });
      expect(await watch.moved()).toEqual({
        [FINISHED]: {
          'lane="images",outcome="completed"': 1,
          'lane="images",outcome="failed"': 1,
          'lane="images",outcome="cancelled"': 1,
          'lane="portraits",outcome="completed"': 1,
        },
      });
    });
  });
});
