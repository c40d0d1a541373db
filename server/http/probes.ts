import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { healthEndpoint, metricsEndpoint, readinessEndpoint } from '../../src/domain/api/probes';
import type { Config } from '../config';
import type { Database } from '../db/client';
import { AppError } from '../errors';
import type { ImageStorage } from '../images/storage';
import { metricsText } from '../metrics';
import { pingRedis } from '../redis';
import { route } from './contract-route';

/**
 * What balancers and monitoring ask: /healthz (the process and its database), /readyz
 * (everything an answer needs) and /metrics (Prometheus, behind METRICS_TOKEN).
 */
export function probeRoutes(
  server: FastifyInstance,
  deps: { config: Config; database: Database; storage: ImageStorage; redis: Redis | undefined },
): void {
  const { config, database, storage, redis } = deps;
  // Probes are never rate limited: a balancer asking every second from one address must
  // not take an instance out of its pool.
  const probe = { config: { rateLimit: false } } as const;

  route(server, readinessEndpoint, probe, async (request, reply) => {
    const checks: Record<string, 'ok' | 'unavailable'> = {};
    const check = async (name: string, probe: () => Promise<void>) => {
      try {
        await probe();
        checks[name] = 'ok';
      } catch (error) {
        request.log.error({ err: error }, `readiness: ${name} unavailable`);
        checks[name] = 'unavailable';
      }
    };
    await Promise.all([
      check('database', () => database.ping()),
      check('storage', () => storage.check()),
      ...(redis ? [check('redis', () => pingRedis(redis))] : []),
    ]);
    // Without Redis requests are still served (the rate limit is skipped and logged), so
    // a Redis outage reports "degraded" but keeps the instance in the balancer's pool;
    // without the database or the store it can serve nothing useful.
    const ready = checks.database === 'ok' && checks.storage === 'ok';
    const status = !ready ? 'unavailable' : checks.redis === 'unavailable' ? 'degraded' : 'ok';
    return reply.status(ready ? 200 : 503).send({ status, checks });
  });

  // Off (404) without METRICS_TOKEN; with it, only for `Authorization: Bearer <token>`.
  route(server, metricsEndpoint, probe, async (request, reply) => {
    if (!config.METRICS_TOKEN) throw new AppError('NOT_FOUND');
    const presented = Buffer.from(request.headers.authorization ?? '');
    const expected = Buffer.from(`Bearer ${config.METRICS_TOKEN}`);
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      throw new AppError('UNAUTHORIZED');
    }
    const { contentType, body } = await metricsText();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });

  route(server, healthEndpoint, probe, async (request, reply) => {
    try {
      await database.ping();
      return { status: 'ok' as const, database: database.kind };
    } catch (error) {
      request.log.error({ err: error }, 'health check failed');
      return reply.status(503).send({ status: 'unavailable' as const, database: database.kind });
    }
  });
}
