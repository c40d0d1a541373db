import fs from 'node:fs/promises';
import inspector from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers/promises';
import { buildApp } from '../../server/app';
import { parseConfig } from '../../server/config';
import { openDatabase } from '../../server/db/client';
import { createOfflineImageProvider } from '../../server/providers/images/offline';
import type { ImageJob, ImageProvider } from '../../server/providers/images/types';
import { serveParent } from './parent';

/**
 * One instance of the app for the jobs benchmark, as server/main.ts starts it on
 * PostgreSQL (DATABASE_URL, shared with the other instance; REDIS_URL when given), with an
 * image provider that takes BENCH_PROVIDER_DELAY_MS (BENCH_PROVIDER below). Every provider
 * call is clocked here, in the instance, from the call to its answer: the provider's own
 * time, which the parent compares with what the browser sees. Times are milliseconds since
 * the epoch, so the parent can set them beside its own. The parent may also ask for the
 * process's CPU time and event-loop use over a stretch, and for a CPU profile of it.
 */
export interface ProviderCall {
  prompt: string;
  start: number;
  end: number;
  ok: boolean;
}

const now = () => performance.timeOrigin + performance.now();
const env = process.env;
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-jobs-'));
const config = parseConfig(
  {
    NODE_ENV: 'production',
    PORT: env.PORT,
    APP_URL: env.APP_URL,
    DATA_DIR: dataDir,
    DATABASE_URL: env.DATABASE_URL,
    REDIS_URL: env.REDIS_URL,
    REDIS_KEY_PREFIX: env.REDIS_KEY_PREFIX,
    COOKIE_SECRET: env.COOKIE_SECRET,
    INSTANCE_ID: env.INSTANCE_ID,
    STARTER_TOKENS: env.STARTER_TOKENS,
    JOBS_PER_USER: env.JOBS_PER_USER,
    JOBS_SLOTS_IMAGES: env.JOBS_SLOTS_IMAGES,
    JOBS_PER_INSTANCE: env.JOBS_PER_INSTANCE,
    RATE_LIMIT_PER_MINUTE: '1000000',
  },
  { webDir: undefined },
);
if (!config.DATABASE_URL) throw new Error('the jobs benchmark runs its instances on PostgreSQL: DATABASE_URL');

// `remote`: a provider whose picture is made elsewhere, as Stability's is: it answers after
// the delay with a PNG the offline renderer made once at start. `offline`: the offline
// renderer itself, drawing and encoding each picture in this process after the delay.
const delayMs = Number(env.BENCH_PROVIDER_DELAY_MS ?? 2000);
const offline = createOfflineImageProvider({ delayMs: env.BENCH_PROVIDER === 'offline' ? delayMs : 0 });
const ready = await offline.generate({
  model: 'original',
  prompt: 'bench',
  width: 1024,
  height: 1024,
  seed: 1,
  outputFormat: 'png',
});
const remote: ImageProvider = {
  name: 'bench-remote',
  async generate(job) {
    await setTimeout(delayMs, undefined, { signal: job.signal });
    return { ...ready, seed: job.seed ?? ready.seed };
  },
};
const inner = env.BENCH_PROVIDER === 'offline' ? offline : remote;
const calls: ProviderCall[] = [];
const provider: ImageProvider = {
  name: inner.name,
  async generate(job: ImageJob) {
    const start = now();
    try {
      const result = await inner.generate(job);
      calls.push({ prompt: job.prompt, start, end: now(), ok: true });
      return result;
    } catch (error) {
      calls.push({ prompt: job.prompt, start, end: now(), ok: false });
      throw error;
    }
  },
};

// The pool as server/main.ts opens it (its default size).
const database = await openDatabase({ kind: 'postgres', url: config.DATABASE_URL });
const app = await buildApp({
  config,
  database,
  cookieSecret: config.COOKIE_SECRET ?? '',
  providers: { images: provider },
});
await app.server.listen({ port: config.PORT, host: '127.0.0.1' });

process.on('SIGTERM', () => {
  void (async () => {
    await app.server.close();
    await database.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    process.exit(0);
  })();
});

const profiler = new inspector.Session();
const post = (method: string) =>
  new Promise<unknown>((resolve, reject) =>
    profiler.post(method, (error, result) => (error ? reject(error) : resolve(result))),
  );
let usage = { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), at: performance.now() };

serveParent(async (request) => {
  switch (request.type) {
    case 'ready':
      return null;
    case 'calls':
      return calls;
    case 'profile:start':
      profiler.connect();
      await post('Profiler.enable');
      await post('Profiler.start');
      return null;
    case 'profile:stop': {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      profiler.disconnect();
      await fs.writeFile(request.file as string, JSON.stringify(profile));
      return null;
    }
    case 'usage:start':
      usage = { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), at: performance.now() };
      return null;
    case 'usage': {
      // The share of the stretch this process's event loop was busy, and its CPU time.
      const cpu = process.cpuUsage(usage.cpu);
      return {
        eventLoopBusy: performance.eventLoopUtilization(usage.elu).utilization,
        cpuMs: (cpu.user + cpu.system) / 1000,
        wallMs: performance.now() - usage.at,
      };
    }
    default:
      throw new Error(`unknown request ${request.type}`);
  }
});
