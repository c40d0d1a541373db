import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

/**
 * The Redis connection shared by the instances' rate limit. ioredis is loaded only when
 * REDIS_URL is set: a single instance does not carry it. Commands fail at once while
 * Redis is away (no offline queue), so the rate limit skips counting and requests are
 * served; the outage is logged, at most once per `logEveryMs` while it lasts.
 */
export async function connectRedis(url: string, log: FastifyBaseLogger, logEveryMs = 30_000): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
    // Keep trying, at most every 2 s: Redis coming back is picked up without a restart.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  let lastLogged = 0;
  let down = false;
  redis.on('error', (error: Error) => {
    const now = Date.now();
    if (now - lastLogged < logEveryMs) return;
    lastLogged = now;
    down = true;
    log.error({ err: error }, 'Redis unavailable: requests are served without the shared rate limit');
  });
  redis.on('ready', () => {
    if (down) log.warn('Redis is back: the shared rate limit counts again');
    down = false;
    lastLogged = 0;
  });
  return redis;
}

/** Throws unless Redis answers (the readiness check). */
export async function pingRedis(redis: Redis): Promise<void> {
  const answer: string = await redis.ping();
  if (answer !== 'PONG') throw new Error(`Redis answered ${answer}`);
}
