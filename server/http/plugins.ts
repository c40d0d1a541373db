import compress from '@fastify/compress';
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { errorCatalogue } from '../../src/domain/errors';
import type { Config } from '../config';
import { observeRequest } from '../metrics';
import { connectRedis } from '../redis';
import { registerWebAssets } from './web';

export interface Plugins {
  /** The built SPA's pages for the page fallback, undefined without a build. */
  pages: Awaited<ReturnType<typeof registerWebAssets>>;
  /** The shared rate-limit counter, when REDIS_URL is set. */
  redis: Redis | undefined;
}

/**
 * What every answer goes through, in order: security headers, cookies, the built SPA's
 * files, compression, the rate limit, the headers every answer carries, the request
 * metrics and the cross-site check.
 */
export async function registerPlugins(server: FastifyInstance, config: Config, cookieSecret: string): Promise<Plugins> {
  await server.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:', 'blob:', 'https:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    // Google avatars are cross-origin images.
    crossOriginEmbedderPolicy: false,
    hsts: config.appUrl.startsWith('https://'),
    // no-referrer would make browsers send `Origin: null` on same-origin form posts,
    // which the cross-site check below must refuse.
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    crossOriginResourcePolicy: { policy: 'same-site' },
  });
  await server.register(cookie, { secret: cookieSecret });
  // The built SPA's files come first: registered before the compression and rate-limit
  // plugins, they are sent as compressed at build time and never counted (server/http/web.ts).
  const pages = await registerWebAssets(server, config.webDir);
  // JSON answers are compressed per request (brotli, else gzip) above 1 KiB. The chat's
  // event stream is written to the raw response, which this never sees, and
  // text/event-stream is not among the types it compresses anyway.
  await server.register(compress, { global: true, threshold: 1024, encodings: ['br', 'gzip'] });
  // With REDIS_URL every instance counts in Redis, so a client has one allowance
  // whichever instance answers; a Redis outage skips counting (logged) and still serves.
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, server.log) : undefined;
  if (redis) server.addHook('onClose', async () => void redis.disconnect());
  await server.register(rateLimit, {
    max: config.RATE_LIMIT_PER_MINUTE,
    timeWindow: 60_000,
    ...(redis ? { redis, nameSpace: `${config.REDIS_KEY_PREFIX}rate-limit:`, skipOnError: true } : {}),
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      success: false,
      code: 'RATE_LIMITED',
      message: errorCatalogue.RATE_LIMITED.message,
      retryAfter: context.after,
    }),
  });

  server.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // The app's own time for this answer, from its first byte read to its last hook (the
    // compression ran just before): a browser's network panel and the benchmarks read it.
    reply.header('server-timing', `app;dur=${reply.elapsedTime.toFixed(2)}`);
    // API answers are per user (balances, conversations, images): never kept by a browser
    // or a shared cache. Routes that want caching (files, assets) set their own header.
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json') && !reply.hasHeader('cache-control')) {
      reply.header('cache-control', 'no-store');
    }
  });
  server.addHook('onResponse', async (request, reply) => {
    // The route's pattern, never the URL: image names and ids would explode the series.
    const route = request.routeOptions.url ?? 'unmatched';
    observeRequest(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
  });

  // A state-changing request from another site is refused: the session cookie is
  // SameSite=Lax, and this closes the rest of the cross-site request forgery door.
  const appOrigin = new URL(config.appUrl).origin;
  server.addHook('onRequest', async (request) => {
    if (['GET', 'HEAD', 'OPTIONS'].includes(request.method)) return;
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== appOrigin) {
      throw Object.assign(new Error('cross-site request'), { appCode: 'CROSS_SITE_REQUEST' });
    }
  });
  return { pages, redis };
}
