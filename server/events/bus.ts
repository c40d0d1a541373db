import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import pg from 'pg';

/**
 * Pokes between instances: "user 7 has a new event", "a job waits in line". A poke carries
 * no data that matters: whoever hears it reads the database, so a lost or doubled poke
 * costs a moment, never an event (the readers also look on a timer).
 *
 * - one instance (the embedded database): in process;
 * - PostgreSQL: LISTEN/NOTIFY on one connection of its own;
 * - Redis (REDIS_URL): pub/sub on a connection of its own.
 */
export interface Bus {
  readonly kind: 'local' | 'postgres' | 'redis';
  publish(channel: BusChannel, message: string): Promise<void>;
  /** Calls `listener` for every message on `channel` (this instance's own included). */
  subscribe(channel: BusChannel, listener: (message: string) => void): () => void;
  close(): Promise<void>;
}

/** `events`: a user id whose event log grew. `jobs`: the line or a job's cancel moved. */
export type BusChannel = 'events' | 'jobs';

const CHANNELS: readonly BusChannel[] = ['events', 'jobs'];

/** Channel names as PostgreSQL and Redis see them, so other software on the same server is not disturbed. */
const wireName = (channel: BusChannel) => `imagegen_${channel}`;

class Listeners {
  private readonly emitter = new EventEmitter();
  constructor() {
    // One listener per open event stream: hundreds are normal.
    this.emitter.setMaxListeners(0);
  }
  emit(channel: BusChannel, message: string): void {
    this.emitter.emit(channel, message);
  }
  add(channel: BusChannel, listener: (message: string) => void): () => void {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }
}

export function localBus(): Bus {
  const listeners = new Listeners();
  return {
    kind: 'local',
    publish: async (channel, message) => {
      // Asynchronous like the networked buses: a publisher never runs its listeners inline.
      queueMicrotask(() => listeners.emit(channel, message));
    },
    subscribe: (channel, listener) => listeners.add(channel, listener),
    close: async () => {},
  };
}

/**
 * LISTEN on a connection of its own, reconnecting (every `retryMs`) when it drops;
 * NOTIFY through the application's pool (`notify`).
 */
export async function postgresBus(
  url: string,
  notify: (channel: string, message: string) => Promise<void>,
  onError: (error: unknown) => void,
  retryMs = 1_000,
): Promise<Bus> {
  const listeners = new Listeners();
  let client: pg.Client | undefined;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      const channel = CHANNELS.find((c) => wireName(c) === message.channel);
      if (channel) listeners.emit(channel, message.payload ?? '');
    });
    next.on('error', (error) => {
      onError(error);
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      schedule();
    });
    await next.connect();
    for (const channel of CHANNELS) await next.query(`LISTEN ${wireName(channel)}`);
    client = next;
  };
  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((error: unknown) => {
        onError(error);
        schedule();
      });
    }, retryMs);
    retry.unref();
  };
  await connect();

  return {
    kind: 'postgres',
    publish: (channel, message) => notify(wireName(channel), message),
    subscribe: (channel, listener) => listeners.add(channel, listener),
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}

/**
 * Publishes on the shared connection; subscribes on a duplicate (a subscribed connection
 * can do nothing else). Channels carry REDIS_KEY_PREFIX, so deployments sharing a Redis
 * do not hear each other.
 */
export function redisBus(redis: Redis, prefix: string, onError: (error: unknown) => void): Bus {
  const redisName = (channel: BusChannel) => `${prefix}${wireName(channel)}`;
  const listeners = new Listeners();
  const subscriber = redis.duplicate({ enableOfflineQueue: true });
  subscriber.on('error', onError);
  subscriber.on('message', (wire: string, message: string) => {
    const channel = CHANNELS.find((c) => redisName(c) === wire);
    if (channel) listeners.emit(channel, message);
  });
  // Subscribed on every (re)connection: Redis may be away at start or come back later; until
  // then the readers' timers stand in for the pokes.
  const subscribe = () => {
    subscriber.subscribe(...CHANNELS.map(redisName)).catch(onError);
  };
  subscriber.on('ready', subscribe);
  return {
    kind: 'redis',
    publish: async (channel, message) => {
      await redis.publish(redisName(channel), message);
    },
    subscribe: (channel, listener) => listeners.add(channel, listener),
    close: async () => {
      subscriber.disconnect();
    },
  };
}
