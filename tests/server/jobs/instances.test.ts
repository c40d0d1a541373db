import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../server/db/client';
import { openFreshPostgres, requirePostgres, requireRedis, startTestApp, type TestApp } from '../helpers';
import { signedInUser, type TestUser } from '../images/support';
import { sseFrames } from './support';

// Issue #28 item 4: job events reach the browser whichever instance does the work, through
// PostgreSQL LISTEN/NOTIFY, or Redis pub/sub when configured. The streams' own timer is set
// to a minute here, so an event that arrives in seconds came through the bus.
const SLOW_POLL = { JOBS_POLL_MS: '60000' };

/** Two instances on one PostgreSQL database: `worker` runs jobs, `watcher` runs none and streams. */
async function twoInstances(adminUrl: string, env: Record<string, string>) {
  let first: Database | undefined;
  const worker = await startTestApp(
    {
      name: 'postgres',
      open: async () => {
        first = await openFreshPostgres(adminUrl, 6);
        return first;
      },
    },
    { ...SLOW_POLL, ...env },
  );
  const url = first!.url!;
  const watcher = await startTestApp(
    { name: 'postgres', open: () => openDatabase({ kind: 'postgres', url, poolSize: 6 }) },
    { ...SLOW_POLL, JOBS_PER_INSTANCE: '0', ...env },
  );
  return { worker, watcher };
}

async function expectEventsAcross(worker: TestApp, watcher: TestApp, user: TestUser): Promise<void> {
  const controller = new AbortController();
  const response = await fetch(`${watcher.url}/api/events`, {
    headers: { cookie: user.jar.header() },
    signal: controller.signal,
  });
  const frames = sseFrames(response);
  expect((await frames.next()).value).toMatchObject({ event: 'ready' });
  const started = Date.now();
  // The job is made and run on the other instance (the user's id is the watcher's account).
  const id = await worker.services.images.submit(user.id, 'original', {
    prompt: 'across instances',
    width: 1024,
    height: 1024,
  });
  const states: string[] = [];
  for await (const frame of frames) {
    const data = frame.data as { job: { id: number; state: string } };
    expect(data.job.id).toBe(id);
    states.push(data.job.state);
    if (data.job.state === 'completed') break;
  }
  controller.abort();
  expect(states).toEqual(['queued', 'running', 'completed']);
  expect(Date.now() - started).toBeLessThan(20_000);
}

describe('job events across instances through PostgreSQL LISTEN/NOTIFY', () => {
  const adminUrl = requirePostgres();
  if (!adminUrl) return;
  let apps: { worker: TestApp; watcher: TestApp };
  beforeAll(async () => {
    apps = await twoInstances(adminUrl, {});
  });
  afterAll(async () => {
    await apps.watcher.close();
    await apps.worker.close();
  });

  it('a stream on one instance follows a job another instance runs', async () => {
    expect(apps.watcher.services.events.bus.kind).toBe('postgres');
    const user = await signedInUser(apps.watcher, 'across-pg@example.com');
    await expectEventsAcross(apps.worker, apps.watcher, user);
  });
});

describe('job events across instances through Redis pub/sub', async () => {
  const adminUrl = requirePostgres();
  const redisUrl = await requireRedis();
  if (!adminUrl || !redisUrl) return;
  let apps: { worker: TestApp; watcher: TestApp };
  beforeAll(async () => {
    apps = await twoInstances(adminUrl, {
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `test-${process.pid}-${Date.now()}:`,
    });
  });
  afterAll(async () => {
    await apps.watcher.close();
    await apps.worker.close();
  });

  it('a stream on one instance follows a job another instance runs', async () => {
    expect(apps.worker.services.events.bus.kind).toBe('redis');
    const user = await signedInUser(apps.watcher, 'across-redis@example.com');
    await expectEventsAcross(apps.worker, apps.watcher, user);
  });
});
