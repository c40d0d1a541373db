import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../server/db/client';
import { localBus } from '../../../server/events/bus';
import { createOfflineImageProvider } from '../../../server/providers/images/offline';
import type { ImageJob, ImageProvider, ImageResult } from '../../../server/providers/images/types';
import { pglite, startTestApp, type TestDatabaseKind } from '../helpers';
import { until } from '../chat/helpers';
import { balance, expectLedgerConsistent, imagesOf, postJson, requestsOf, signedInUser } from '../images/support';
import { heldImageProvider, jobIdOf, ORIGINAL_COST, postOriginal } from './support';

// Issue #28 and docs/architecture.md "Durable jobs": a job starts as soon as a slot is free, on
// whichever instance has room, and the poll (JOBS_POLL_MS) only covers a wake-up that was lost.
// Each suite sets the poll to a minute, so a job that waited for it would fail the test's wait.

const STARTER = 50;
const SLOW_POLL = { JOBS_POLL_MS: '60000', STARTER_TOKENS: String(STARTER) };

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

describe('jobs start without waiting for the poll', () => {
  it('the next job in line starts as soon as the one before it frees the slot', async () => {
    const provider = heldImageProvider();
    const app = await startTestApp(
      pglite,
      { ...SLOW_POLL, JOBS_SLOTS_IMAGES: '1' },
      {},
      { providers: { images: provider } },
    );
    opened.push(async () => (provider.releaseAll(), app.close()));
    const user = await signedInUser(app, 'next-in-line@example.com');
    const first = postOriginal(app, user, 'first');
    await until(async () => (provider.held.length === 1 ? true : undefined));
    const second = postOriginal(app, user, 'second');
    await jobIdOf(app, user, 'second');
    expect(provider.started).toEqual(['first']);
    provider.releaseAll();
    await until(async () => (provider.started.includes('second') ? true : undefined));
    provider.releaseAll();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
  });

  it('an instance runs at most JOBS_PER_INSTANCE jobs at once, whatever the provider’s slots', async () => {
    const provider = heldImageProvider();
    const app = await startTestApp(
      pglite,
      { ...SLOW_POLL, JOBS_SLOTS_IMAGES: '3', JOBS_PER_INSTANCE: '1' },
      {},
      { providers: { images: provider } },
    );
    opened.push(async () => (provider.releaseAll(), app.close()));
    const users = [await signedInUser(app, 'room-a@example.com'), await signedInUser(app, 'room-b@example.com')];
    const posts = users.map((user, i) => postOriginal(app, user, `room ${i}`));
    await until(async () => (provider.held.length === 1 ? true : undefined));
    await jobIdOf(app, users[1]!, 'room 1');
    await jobIdOf(app, users[0]!, 'room 0');
    expect(provider.started).toHaveLength(1);
    provider.releaseAll();
    await until(async () => (provider.started.length === 2 ? true : undefined));
    expect(provider.mostAtOnce).toBe(1);
    provider.releaseAll();
    expect((await Promise.all(posts)).map((reply) => reply.status)).toEqual([200, 200]);
  });

  it('a job accepted by an instance that runs none starts at once on another, and its request hears the end', async () => {
    const database: Database = await pglite.open();
    const shared: TestDatabaseKind = { name: 'pglite', open: async () => database };
    const bus = localBus();
    const provider = heldImageProvider();
    const front = await startTestApp(shared, { ...SLOW_POLL, JOBS_PER_INSTANCE: '0' }, {}, { bus });
    const worker = await startTestApp(shared, SLOW_POLL, {}, { bus, providers: { images: provider } });
    opened.push(async () => {
      provider.releaseAll();
      await front.server.close();
      await worker.close();
    });
    const user = await signedInUser(front, 'front@example.com');
    const reply = postOriginal(front, user, 'taken elsewhere');
    await until(async () => (provider.held.length === 1 ? true : undefined));
    provider.releaseAll();
    // The front's request waits on the user's events, not on the minute's poll.
    expect((await reply).status).toBe(200);
    expect(await imagesOf(front, user)).toHaveLength(1);
  });
});

/** A provider that does not listen to the abort: its answer comes when the test releases it. */
function deafProvider(): ImageProvider & { calls: number; release(): void } {
  const offline = createOfflineImageProvider();
  let release = () => {};
  const provider = {
    name: 'offline',
    calls: 0,
    release: () => release(),
    async generate(job: ImageJob): Promise<ImageResult> {
      provider.calls += 1;
      await new Promise<void>((resolve) => (release = resolve));
      return offline.generate({ ...job, signal: undefined });
    },
  };
  return provider;
}

describe('a cancel that comes while the provider’s answer is on its way', () => {
  it('the picture is not kept and the user pays nothing', async () => {
    const provider = deafProvider();
    const app = await startTestApp(pglite, SLOW_POLL, {}, { providers: { images: provider } });
    opened.push(async () => (provider.release(), app.close()));
    const user = await signedInUser(app, 'late-answer@example.com');
    const reply = postOriginal(app, user, 'answered after the cancel');
    const id = await jobIdOf(app, user, 'answered after the cancel');
    await until(async () => (provider.calls === 1 ? true : undefined));
    expect(await balance(app, user)).toBe(STARTER - ORIGINAL_COST);
    const cancel = postJson(app, user, `/api/jobs/${id}/cancel`, {});
    await until(async () => ((await requestsOf(app, user))[0]?.cancelRequested ? true : undefined));
    provider.release();
    expect((await cancel).status).toBe(200);
    expect((await reply).body).toMatchObject({ success: false, code: 'JOB_CANCELLED' });
    expect(await imagesOf(app, user)).toEqual([]);
    expect(await balance(app, user)).toBe(STARTER);
    await expectLedgerConsistent(app, user);
  });
});
