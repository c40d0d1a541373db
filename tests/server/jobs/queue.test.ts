// One file: the queue through HTTP on both databases: its cases share the gated provider and the
// users.
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generationRequests, users } from '../../../server/db/schema';
import { JOB_CLAIM_LOCK } from '../../../server/jobs/repository';
import { entriesFor } from '../../../server/ledger/repository';
import { localBus } from '../../../server/events/bus';
import type { Database } from '../../../server/db/client';
import { pglite, startTestApp, testDatabases, type TestApp, type TestDatabaseKind } from '../helpers';
import { until } from '../chat/helpers';
import {
  balance,
  expectLedgerConsistent,
  getJson,
  imagesOf,
  postJson,
  requestsOf,
  signedInUser,
  type TestUser,
} from '../images/support';
import { facePhoto, postPortrait } from '../portraits/support';
import { heldImageProvider, jobIdOf, ORIGINAL, ORIGINAL_COST, originalBody, sseFrames } from './support';

// Issue #28: durable jobs. Expectations come from the issue: the per-user limit (default 4)
// answers 429 and charges nothing; a global limit per provider, jobs starting in order;
// Cancel refunds a job in line at once and stops a running one at the provider; a finished
// one answers clearly and refunds nothing; SPEC's endpoint waits for its job and a client
// that leaves does not cancel it; events resume after Last-Event-ID without loss or repeats.

const STARTER = 50;

/** Posts and keeps the answer when it comes, without waiting for it. */
function submit(app: TestApp, user: TestUser, prompt: string) {
  const outcome: { reply?: { status: number; body: Record<string, unknown> } } = {};
  const done = postJson(app, user, ORIGINAL, originalBody(prompt)).then((reply) => {
    outcome.reply = reply;
    return reply;
  });
  return { outcome, done };
}

async function activeJobs(app: TestApp, user: TestUser): Promise<number> {
  const rows = await app.database.db.select({ n: users.activeJobs }).from(users).where(eq(users.id, user.id));
  return rows[0]?.n ?? -1;
}

describe.each(testDatabases())('durable jobs on $name', (kind: TestDatabaseKind) => {
  let app: TestApp;
  let provider: ReturnType<typeof heldImageProvider>;
  let logins = 0;
  const newUser = () => signedInUser(app, `jobs-${kind.name}-${(logins += 1)}@example.com`);

  beforeAll(async () => {
    provider = heldImageProvider();
    app = await startTestApp(
      kind,
      { JOBS_SLOTS_IMAGES: '2', JOBS_PER_USER: '4', STARTER_TOKENS: String(STARTER) },
      {},
      { providers: { images: provider } },
    );
  });
  afterEach(() => {
    provider.releaseAll();
  });
  afterAll(async () => {
    provider.releaseAll();
    await app.close();
  });

  it('lets a user have 4 jobs at once: the others answer 429 TOO_MANY_JOBS and charge nothing', async () => {
    const user = await newUser();
    const posts = Array.from({ length: 6 }, (_, i) => submit(app, user, `limit ${i}`));
    const refused = await until(async () => {
      const answered = posts.filter((p) => p.outcome.reply);
      return answered.length === 2 ? answered.map((p) => p.outcome.reply!) : undefined;
    });
    for (const reply of refused) {
      expect(reply.status).toBe(429);
      expect(reply.body).toMatchObject({ success: false, code: 'TOO_MANY_JOBS', details: { limit: 4 } });
    }
    expect(await requestsOf(app, user)).toHaveLength(4);
    expect(await balance(app, user)).toBe(STARTER - 4 * ORIGINAL_COST);
    expect(await activeJobs(app, user)).toBe(4);

    await until(async () => (provider.held.length >= 2 ? true : undefined));
    provider.releaseAll();
    await until(async () =>
      provider.started.length >= 4 && provider.held.length === 0 ? true : (provider.releaseAll(), undefined),
    );
    const accepted = await Promise.all(posts.filter((p) => p.outcome.reply?.status !== 429).map((p) => p.done));
    expect(accepted.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await activeJobs(app, user)).toBe(0);
    expect(await imagesOf(app, user)).toHaveLength(4);
    const entries = await entriesFor(app.database.db, user.id);
    expect(entries.filter((e) => e.reason === 'generation_charge')).toHaveLength(4);
    expect(entries.filter((e) => e.reason === 'generation_refund')).toHaveLength(0);
    await expectLedgerConsistent(app, user);
  });

  it('runs at most the provider’s slots at once, starting jobs in the order they were submitted', async () => {
    provider.started.length = 0;
    provider.mostAtOnce = 0;
    const people = [await newUser(), await newUser(), await newUser()];
    const order: string[] = [];
    const posts = [];
    for (let i = 0; i < 6; i += 1) {
      const person = people[i % 3]!;
      const prompt = `order ${i}`;
      posts.push(submit(app, person, prompt));
      // The next is submitted once this one is stored: the order of submission is known.
      await jobIdOf(app, person, prompt);
      order.push(prompt);
    }
    await until(async () => (provider.held.length === 2 ? true : undefined));
    expect(provider.started).toEqual(order.slice(0, 2));
    // One at a time: each release frees a slot for the next in line, and no more.
    for (let done = 1; done <= 4; done += 1) {
      provider.held[0]!.release();
      await until(async () => (provider.started.length === 2 + done && provider.held.length === 2 ? true : undefined));
    }
    provider.releaseAll();
    provider.releaseAll();
    const replies = await Promise.all(posts.map((p) => p.done));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(provider.started).toEqual(order);
    expect(provider.mostAtOnce).toBe(2);
  });

  it('lists the queue with states and places in line, only to its owner', async () => {
    const user = await newUser();
    const other = await newUser();
    // Two slots: keep them busy with another user's jobs so these wait in line.
    // One after the other, so that the list's order (order of submission) is known.
    const blockerA = submit(app, other, 'blocker a');
    await jobIdOf(app, other, 'blocker a');
    const blockers = [blockerA, submit(app, other, 'blocker b')];
    await until(async () => (provider.held.length === 2 ? true : undefined));
    const first = submit(app, user, 'queued first');
    await jobIdOf(app, user, 'queued first');
    const second = submit(app, user, 'queued second');
    await jobIdOf(app, user, 'queued second');

    const list = await getJson(app, user, '/api/jobs');
    expect(list.status).toBe(200);
    const data = list.body.data as { jobs: Array<Record<string, unknown>>; perUserLimit: number };
    expect(data.perUserLimit).toBe(4);
    expect(data.jobs.map((j) => [j.prompt, j.state, j.position, j.model])).toEqual([
      ['queued first', 'queued', 1, 'original'],
      ['queued second', 'queued', 2, 'original'],
    ]);
    expect(data.jobs.every((j) => typeof j.etaSeconds === 'number')).toBe(true);
    const theirs = (await getJson(app, other, '/api/jobs')).body.data as {
      jobs: Array<{ prompt: string; state: string }>;
    };
    expect(theirs.jobs.map((j) => [j.prompt, j.state])).toEqual([
      ['blocker a', 'running'],
      ['blocker b', 'running'],
    ]);
    expect((await getJson(app, undefined, '/api/jobs')).status).toBe(401);

    provider.releaseAll();
    await until(async () => (first.outcome.reply ? true : (provider.releaseAll(), undefined)));
    await until(async () => (second.outcome.reply ? true : (provider.releaseAll(), undefined)));
    await Promise.all(blockers.map((b) => b.done));
    const after = (await getJson(app, user, '/api/jobs')).body.data as {
      jobs: Array<{ prompt: string; state: string; image: { url: string } | null; progress: number }>;
    };
    // Both ran at once: which finished first is not set.
    expect(after.jobs.map((j) => [j.prompt, j.state, j.progress]).sort()).toEqual([
      ['queued first', 'completed', 1],
      ['queued second', 'completed', 1],
    ]);
    expect(after.jobs.every((j) => j.image?.url.startsWith(`${app.url}/images/`))).toBe(true);
  });

  it('cancels a job in line at once and a running one at the provider, refunding each once', async () => {
    const user = await newUser();
    const other = await newUser();
    const running = submit(app, user, 'cancel running');
    await until(async () => (provider.held.some((c) => c.prompt === 'cancel running') ? true : undefined));
    const blocker = submit(app, other, 'cancel blocker');
    await until(async () => (provider.held.length === 2 ? true : undefined));
    const queued = submit(app, user, 'cancel queued');
    const queuedId = await jobIdOf(app, user, 'cancel queued');
    const runningId = await jobIdOf(app, user, 'cancel running');
    expect(await balance(app, user)).toBe(STARTER - 2 * ORIGINAL_COST);

    // Someone else's job is not found, and nothing moves.
    expect((await postJson(app, other, `/api/jobs/${queuedId}/cancel`, {})).status).toBe(404);

    const inLine = await postJson(app, user, `/api/jobs/${queuedId}/cancel`, {});
    expect(inLine.status).toBe(200);
    expect(inLine.body.data).toMatchObject({
      job: { id: queuedId, state: 'cancelled' },
      balance: STARTER - ORIGINAL_COST,
    });
    // The English text the app shows for JOB_CANCELLED (src/i18n/locales/common.en.ts).
    expect((await queued.done).body).toMatchObject({
      success: false,
      code: 'JOB_CANCELLED',
      message: 'The job was cancelled and your tokens were refunded',
    });
    expect((await queued.done).status).toBe(409);

    const atProvider = await postJson(app, user, `/api/jobs/${runningId}/cancel`, {});
    expect(atProvider.status).toBe(200);
    expect(provider.aborted).toContain('cancel running');
    expect((await running.done).status).toBe(409);
    expect(await balance(app, user)).toBe(STARTER);

    // Cancelling again: already finished, nothing refunded twice.
    const again = await postJson(app, user, `/api/jobs/${runningId}/cancel`, {});
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ success: false, code: 'JOB_FINISHED' });
    expect(await balance(app, user)).toBe(STARTER);
    const rows = await requestsOf(app, user);
    expect(rows.map((r) => [r.status, r.errorCode])).toEqual([
      ['FAILED', 'JOB_CANCELLED'],
      ['FAILED', 'JOB_CANCELLED'],
    ]);
    const entries = await entriesFor(app.database.db, user.id);
    expect(entries.filter((e) => e.reason === 'generation_refund')).toHaveLength(2);
    await expectLedgerConsistent(app, user);

    provider.releaseAll();
    await blocker.done;
    // A completed job cannot be cancelled either: nothing is refunded.
    const blockerId = await jobIdOf(app, other, 'cancel blocker');
    const late = await postJson(app, other, `/api/jobs/${blockerId}/cancel`, {});
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('JOB_FINISHED');
    expect(await balance(app, other)).toBe(STARTER - ORIGINAL_COST);
    await expectLedgerConsistent(app, other);
  });

  it('finishes the job of a client that left, paid once', async () => {
    const user = await newUser();
    const leave = new AbortController();
    const posting = fetch(`${app.url}${ORIGINAL}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: app.url, cookie: user.jar.header() },
      body: JSON.stringify(originalBody('left behind')),
      signal: leave.signal,
    }).catch((error: unknown) => error);
    await until(async () => (provider.held.some((c) => c.prompt === 'left behind') ? true : undefined));
    leave.abort();
    await posting;
    provider.releaseAll();
    await until(async () => ((await requestsOf(app, user))[0]?.status === 'COMPLETED' ? true : undefined));
    expect(await imagesOf(app, user)).toHaveLength(1);
    expect(await balance(app, user)).toBe(STARTER - ORIGINAL_COST);
    await expectLedgerConsistent(app, user);
  });

  it('streams the user’s job events, and a reconnect with Last-Event-ID gets each missed one once, in order', async () => {
    const user = await newUser();
    expect((await fetch(`${app.url}/api/events`)).status).toBe(401);
    const open = (lastEventId?: number) => {
      const controller = new AbortController();
      const headers: Record<string, string> = { cookie: user.jar.header() };
      if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId);
      const response = fetch(`${app.url}/api/events`, { headers, signal: controller.signal });
      return { controller, response };
    };

    const first = open();
    const response = await first.response;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('cache-control')).toMatch(/no-store/);
    const frames = sseFrames(response);
    const opening = await frames.next();
    if (opening.done) throw new Error('the stream ended at once');
    const ready = opening.value;
    expect(ready.event).toBe('ready');

    const one = submit(app, user, 'streamed one');
    const seen: Array<{ id: number; state: string; prompt: string; balance: number }> = [];
    for await (const frame of frames) {
      const data = frame.data as { job: { state: string; prompt: string }; balance: number };
      expect(frame.event).toBe('job');
      seen.push({ id: frame.id!, state: data.job.state, prompt: data.job.prompt, balance: data.balance });
      if (data.job.state === 'running') provider.releaseAll();
      if (data.job.state === 'completed') break;
    }
    await one.done;
    expect(seen.map((s) => s.state)).toEqual(['queued', 'running', 'completed']);
    expect(seen.every((s, i) => i === 0 || s.id > seen[i - 1]!.id)).toBe(true);
    expect(seen[0]!.id).toBeGreaterThan(ready.id ?? Infinity);
    expect(seen.at(-1)!.balance).toBe(STARTER - ORIGINAL_COST);
    first.controller.abort();

    // While no stream is open, a second job runs to its end.
    const two = submit(app, user, 'streamed two');
    await until(async () => (provider.held.length > 0 ? true : undefined));
    provider.releaseAll();
    await two.done;

    const resumed = open(seen.at(-1)!.id);
    const again = sseFrames(await resumed.response);
    const missed: Array<{ id: number; state: string; prompt: string }> = [];
    for await (const frame of again) {
      const data = frame.data as { job: { state: string; prompt: string } };
      expect(frame.event).toBe('job');
      missed.push({ id: frame.id!, state: data.job.state, prompt: data.job.prompt });
      if (data.job.state === 'completed') break;
    }
    resumed.controller.abort();
    expect(missed.map((m) => [m.prompt, m.state])).toEqual([
      ['streamed two', 'queued'],
      ['streamed two', 'running'],
      ['streamed two', 'completed'],
    ]);
    expect(missed[0]!.id).toBeGreaterThan(seen.at(-1)!.id);
  });
});

describe('a job in line outlives the instance it was submitted to', () => {
  it('another instance on the same database takes it and finishes it, charged once', async () => {
    const database: Database = await pglite.open();
    const shared: TestDatabaseKind = { name: 'pglite', open: async () => database };
    const bus = localBus();
    // The first instance takes no jobs: what it accepts waits in line.
    const first = await startTestApp(shared, { JOBS_PER_INSTANCE: '0' }, {}, { bus });
    const user = await signedInUser(first, 'outlives@example.com');
    // Its request is cut when the instance stops (SHUTDOWN_GRACE_MS is 0 in tests).
    const waiting = postJson(first, user, ORIGINAL, originalBody('outlives')).catch((error: unknown) => error);
    const id = await jobIdOf(first, user, 'outlives');
    // The first instance stops: the job stays in line.
    await first.server.close();
    await waiting;
    const [row] = await database.db.select().from(generationRequests).where(eq(generationRequests.id, id));
    expect(row).toMatchObject({ status: 'PENDING', startedAt: null });

    const second = await startTestApp(shared, {}, {}, { bus });
    try {
      await until(async () => {
        const [now] = await database.db.select().from(generationRequests).where(eq(generationRequests.id, id));
        return now?.status === 'COMPLETED' ? true : undefined;
      });
      expect(await imagesOf(second, user)).toHaveLength(1);
      const entries = await entriesFor(database.db, user.id);
      expect(entries.filter((e) => e.reason === 'generation_charge')).toHaveLength(1);
      expect(entries.filter((e) => e.reason === 'generation_refund')).toHaveLength(0);
      await expectLedgerConsistent(second, user);
    } finally {
      await second.close();
    }
  });
});

// An instance that begins to stop while its claim of a job is on the way must not leave that
// job claimed and unrun: another instance would find it only once its heartbeat went stale
// (a minute), and refund it as abandoned (504) instead of running it. PostgreSQL only: the
// claim is held on its advisory lock from a second connection, which PGlite does not have.
describe.each(testDatabases().filter((kind) => kind.name === 'postgres'))(
  'a stop while a claim is on its way, on $name',
  (kind) => {
    it('puts the job it claimed back in line, runs nothing, and has settled everything when it returns', async () => {
      const provider = heldImageProvider();
      const app = await startTestApp(
        kind,
        { STARTER_TOKENS: String(STARTER) },
        {},
        { providers: { images: provider } },
      );
      const claimLock = sql`select pg_advisory_xact_lock(${JOB_CLAIM_LOCK})`;
      let unlock!: () => void;
      const held = new Promise<void>((resolve) => (unlock = resolve));
      try {
        const user = await signedInUser(app, 'claimed-at-stop@example.com');
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => (locked = resolve));
        const holder = app.database.db.transaction(async (tx) => {
          await tx.execute(claimLock);
          locked();
          await held;
        });
        await isLocked;
        // Its request is cut when the app closes.
        submit(app, user, 'claimed at stop').done.catch(() => undefined);
        const id = await jobIdOf(app, user, 'claimed at stop');
        // The instance's claim waits for the lock.
        await until(async () => {
          const { rows } = (await app.database.db.execute(
            sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`,
          )) as { rows: { n: number }[] };
          return rows[0]!.n > 0 ? true : undefined;
        });
        const stopped = app.services.jobs.stop();
        unlock();
        await holder;
        await stopped;
        // Taken after the instance's claim has committed (the lock's waiters are served in turn).
        const row = await app.database.db.transaction(async (tx) => {
          await tx.execute(claimLock);
          const [found] = await tx.select().from(generationRequests).where(eq(generationRequests.id, id));
          return found;
        });
        expect(row).toMatchObject({ status: 'PENDING', startedAt: null, claimedBy: null });
        expect(provider.started).toEqual([]);
        expect(await balance(app, user)).toBe(STARTER - ORIGINAL_COST);
      } finally {
        unlock();
        provider.releaseAll();
        await app.close();
      }
    });
  },
);

describe('places in line, estimates and progress (docs/architecture.md, "Durable jobs")', () => {
  it('estimates a job in line by the rounds of slots ahead of it, and a running one by the time it has run', async () => {
    const provider = heldImageProvider();
    // A new database: no finished job yet, so a run is taken to last Stability's usual 10 s.
    const app = await startTestApp(
      pglite,
      { JOBS_SLOTS_IMAGES: '2', STARTER_TOKENS: String(STARTER) },
      {},
      {
        providers: { images: provider },
      },
    );
    try {
      const user = await signedInUser(app, 'estimates@example.com');
      const other = await signedInUser(app, 'estimates-other@example.com');
      const jobs: Array<ReturnType<typeof submit>> = [];
      for (const prompt of ['run a', 'run b']) {
        jobs.push(submit(app, user, prompt));
        await jobIdOf(app, user, prompt);
      }
      await until(async () => (provider.held.length === 2 ? true : undefined));
      for (const prompt of ['line 1', 'line 2']) {
        jobs.push(submit(app, user, prompt));
        await jobIdOf(app, user, prompt);
      }
      jobs.push(submit(app, other, 'line 3'));
      await jobIdOf(app, other, 'line 3');

      const listed = await app.services.jobs.list(user.id);
      const startedAt = Date.parse(listed.jobs.find((j) => j.prompt === 'run a')!.startedAt!);
      const at = async (userId: number, msAfterStart: number) =>
        (await app.services.jobs.list(userId, new Date(startedAt + msAfterStart))).jobs.map((j) => [
          j.prompt,
          j.state,
          j.position,
          j.etaSeconds,
          j.progress,
        ]);
      // Places 1 and 2 wait one round of the 2 slots, place 3 two rounds; a running job has
      // run 4 of its 10 s.
      const [runA, runB, ...inLine] = await at(user.id, 4_000);
      expect(inLine).toEqual([
        ['line 1', 'queued', 1, 10, 0],
        ['line 2', 'queued', 2, 10, 0],
      ]);
      expect(await at(other.id, 4_000)).toEqual([['line 3', 'queued', 3, 20, 0]]);
      expect(runA).toEqual(['run a', 'running', null, 6, 0.4]);
      expect(runB?.slice(0, 3)).toEqual(['run b', 'running', null]);
      // Past its usual time: no time left, and not shown as done before it is.
      const [late] = await at(user.id, 60_000);
      expect(late).toEqual(['run a', 'running', null, 0, 0.95]);

      provider.releaseAll();
      await until(async () => (jobs.every((j) => j.outcome.reply) ? true : (provider.releaseAll(), undefined)));
      const finished = await app.services.jobs.list(user.id);
      expect(finished.jobs.map((j) => [j.state, j.position, j.etaSeconds, j.progress])).toEqual(
        Array.from({ length: 4 }, () => ['completed', null, null, 1]),
      );
      expect(finished.jobs.every((j) => j.error === null && j.finishedAt !== null)).toBe(true);
      expect(finished.jobs.every((j) => j.image?.thumbnailUrl.startsWith(`${app.url}/images/`))).toBe(true);
      // Finished jobs: newest first, for a day after they finished.
      const finishedAt = finished.jobs.map((j) => Date.parse(j.finishedAt!));
      expect(finishedAt).toEqual([...finishedAt].sort((a, b) => b - a));
      const oldest = Math.min(...finishedAt);
      const day = 24 * 60 * 60_000;
      expect((await app.services.jobs.list(user.id, new Date(oldest + day - 1000))).jobs).toHaveLength(4);
      expect((await app.services.jobs.list(user.id, new Date(Math.max(...finishedAt) + day + 1000))).jobs).toEqual([]);
    } finally {
      provider.releaseAll();
      await app.close();
    }
  });

  it('takes a portrait’s run to last Replicate’s usual 30 s before any portrait has finished', async () => {
    // This instance takes no jobs: the portrait stays first in its line.
    const app = await startTestApp(pglite, { JOBS_PER_INSTANCE: '0', STARTER_TOKENS: String(STARTER) });
    try {
      const user = await signedInUser(app, 'portrait-estimate@example.com');
      void postPortrait(app, user, {
        fields: { prompt: 'waits for its estimate' },
        files: [{ bytes: await facePhoto(), name: 'me.jpg' }],
      }).catch((error: unknown) => error);
      const listed = await until(async () => {
        const { jobs } = await app.services.jobs.list(user.id);
        return jobs.length > 0 ? jobs : undefined;
      });
      expect(listed.map((j) => [j.kind, j.state, j.position, j.etaSeconds, j.progress])).toEqual([
        ['portrait', 'queued', 1, 30, 0],
      ]);
    } finally {
      // Closing cuts the request that waits for it.
      await app.close();
    }
  });

  it('refunds a job that waited in line longer than JOBS_QUEUE_TIMEOUT_MS, once, and leaves younger ones', async () => {
    // This instance takes no jobs: what it accepts stays in line.
    const app = await startTestApp(pglite, { JOBS_PER_INSTANCE: '0', JOBS_QUEUE_TIMEOUT_MS: '60000' });
    try {
      const user = await signedInUser(app, 'expired@example.com');
      const waiting = submit(app, user, 'waits too long');
      const id = await jobIdOf(app, user, 'waits too long');
      expect(await balance(app, user)).toBe(STARTER - ORIGINAL_COST);
      const [row] = await app.database.db.select().from(generationRequests).where(eq(generationRequests.id, id));
      const createdAt = row!.createdAt.getTime();
      const jobs = app.services.jobs;

      expect(await jobs.reconcile(undefined, new Date(createdAt + 59_000))).toBe(0);
      expect(await balance(app, user)).toBe(STARTER - ORIGINAL_COST);
      expect(await jobs.reconcile(undefined, new Date(createdAt + 61_000))).toBe(1);
      expect(await jobs.reconcile(undefined, new Date(createdAt + 120_000))).toBe(0);

      expect(await balance(app, user)).toBe(STARTER);
      const entries = await entriesFor(app.database.db, user.id);
      expect(entries.filter((e) => e.reason === 'generation_refund')).toHaveLength(1);
      await expectLedgerConsistent(app, user);
      // The request that waited for it hears that the service could not run it.
      const reply = await waiting.done;
      expect(reply.status).toBe(503);
      expect(reply.body).toMatchObject({
        success: false,
        code: 'SERVICE_UNAVAILABLE',
        message: 'The job waited too long for its turn and was refunded',
      });
      const listed = await jobs.list(user.id);
      expect(listed.jobs.map((j) => [j.prompt, j.state, j.error?.code])).toEqual([
        ['waits too long', 'failed', 'SERVICE_UNAVAILABLE'],
      ]);
    } finally {
      await app.close();
    }
  });
});
