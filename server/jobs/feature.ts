import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { AuthService } from '../auth/service';
import type { Config } from '../config';
import type { Database } from '../db/client';
import { localBus, postgresBus, redisBus, type Bus } from '../events/bus';
import { eventRoutes } from '../events/routes';
import { notify } from '../events/repository';
import { EventLog } from '../events/service';
import type { ImageStorage } from '../images/storage';
import type { Thumbnails } from '../images/thumbnails';
import type { LedgerService } from '../ledger/service';
import { countReconcilerAction, readQueueAtScrape } from '../metrics';
import { runEvery } from '../background/periodic';
import { JobQueue } from './queue';
import { jobRoutes } from './routes';

/** How often the event log drops what no reconnect will ask for any more. */
const EVENT_SWEEP_MS = 60 * 60_000;

/**
 * Durable jobs and the user's event stream: the bus between instances (Redis with
 * REDIS_URL, else PostgreSQL's LISTEN/NOTIFY, else in process), the event log, the queue
 * and its workers, its routes, and the reconciler that refunds the jobs of a dead
 * instance and those that waited in line too long.
 */
export async function registerJobs(
  server: FastifyInstance,
  deps: {
    config: Config;
    database: Database;
    ledger: LedgerService;
    auth: AuthService;
    storage: ImageStorage;
    thumbnails: Thumbnails;
    redis: Redis | undefined;
    bus?: Bus;
  },
): Promise<{ jobs: JobQueue; events: EventLog; bus: Bus }> {
  const { config, database } = deps;
  const onBusError = (error: unknown) => server.log.warn({ err: error }, 'event bus connection failed');
  const bus = deps.bus ?? (await openBus(database, deps.redis, config.REDIS_KEY_PREFIX, onBusError));
  const events = new EventLog(database.db, bus, (error) => server.log.warn({ err: error }, 'event poke failed'));
  const jobs = new JobQueue(
    database.db,
    deps.ledger,
    deps.storage,
    deps.thumbnails,
    events,
    {
      appUrl: config.appUrl,
      perUserLimit: config.JOBS_PER_USER,
      slots: { images: config.JOBS_SLOTS_IMAGES, portraits: config.JOBS_SLOTS_PORTRAITS },
      perInstance: config.JOBS_PER_INSTANCE,
      pollMs: config.JOBS_POLL_MS,
      queueTimeoutMs: config.JOBS_QUEUE_TIMEOUT_MS,
      workers: config.JOBS_PER_INSTANCE > 0,
      instanceId: config.INSTANCE_ID,
    },
    (error, what) => server.log.warn({ err: error }, what),
  );
  jobRoutes(server, { auth: deps.auth, jobs });
  eventRoutes(server, {
    auth: deps.auth,
    events,
    options: { heartbeatMs: config.CHAT_HEARTBEAT_MS, pollMs: config.JOBS_POLL_MS },
  });

  // The image and portrait features have registered their handlers by now: an instance that
  // lacks one refuses to start (ready and listen fail, naming the kind) before it takes a job.
  server.addHook('onReady', async () => jobs.requireHandlers());
  server.addHook('onReady', async () => jobs.start());
  const stopReadingQueue = readQueueAtScrape(
    () => jobs.lanesNow(),
    (error) => server.log.warn({ err: error }, 'the queue could not be read for /metrics'),
  );
  // The jobs this instance runs settle (stored or refunded) before the database closes.
  server.addHook('onClose', async () => {
    stopReadingQueue();
    await jobs.stop(config.SHUTDOWN_GRACE_MS);
    if (!deps.bus) await bus.close();
  });

  // Refunds jobs a crash left running, and those that waited in line too long.
  runEvery(
    server,
    'generation reconciler',
    config.GENERATION_RECONCILE_INTERVAL_MS,
    async () => {
      const refunded = await jobs.reconcile();
      countReconcilerAction('generation', 'refunded', refunded);
      if (refunded > 0) server.log.warn({ refunded }, 'refunded abandoned generations');
    },
    { atStart: true },
  );
  runEvery(server, 'event log sweep', EVENT_SWEEP_MS, async () => {
    await events.sweep();
  });
  return { jobs, events, bus };
}

async function openBus(
  database: Database,
  redis: Redis | undefined,
  redisPrefix: string,
  onError: (error: unknown) => void,
): Promise<Bus> {
  if (redis) return redisBus(redis, redisPrefix, onError);
  if (database.url)
    return postgresBus(database.url, (channel, message) => notify(database.db, channel, message), onError);
  return localBus();
}
