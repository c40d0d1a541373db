import { randomUUID } from 'node:crypto';
import compress from '@fastify/compress';
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';
import { errorCatalogue, type ErrorBody, type ErrorCode } from '../src/domain/errors';
import { issueErrorCode } from '../src/domain/text';
import { mountDevIdentityProvider, DEV_CLIENT_ID } from './auth/dev-idp';
import { OidcClient } from './auth/oidc';
import { authRoutes, CALLBACK_PATH } from './auth/routes';
import { AuthService } from './auth/service';
import { chatSetupFor, type ChatSetup } from './chat/models';
import { startChatReconciler } from './chat/reconciler';
import { runEvery } from './jobs/periodic';
import { chatRoutes } from './chat/routes';
import { ChatService } from './chat/service';
import type { Config } from './config';
import type { Database } from './db/client';
import { AppError, isAppError } from './errors';
import { answerClientError, answerFrameworkError, isClientGone } from './http/client-errors';
import { requestForLog } from './http/log';
import { trustProxyOption } from './http/proxy';
import { registerPageFallback, registerWebAssets } from './http/web';
import { imageRoutes } from './images/routes';
import { ImageService } from './images/service';
import { createImageStorage, type ImageStorage } from './images/storage';
import { Thumbnails } from './images/thumbnails';
import { PaidJobs } from './jobs/paid-job';
import { LedgerService } from './ledger/service';
import { portraitRoutes } from './portraits/routes';
import { releaseSpoolFolder } from './uploads/spool';
import { PortraitService } from './portraits/service';
import { startPaymentJobs } from './payments/jobs';
import { paymentRoutes } from './payments/routes';
import { sandboxRoutes } from './payments/sandbox-routes';
import { PaymentsService } from './payments/service';
import { createPaymentProvider } from './providers/payments/factory';
import { SandboxProvider } from './providers/payments/sandbox';
import type { PaymentProvider } from './providers/payments/types';
import { createImageProvider } from './providers/images/factory';
import type { ImageProvider } from './providers/images/types';
import { createPortraitProvider } from './providers/portraits/factory';
import type { PortraitProvider } from './providers/portraits/types';
import { countReconcilerAction, metricsText, observeRequest } from './metrics';
import { connectRedis, pingRedis } from './redis';
import { timingSafeEqual } from 'node:crypto';

export interface AppDeps {
  config: Config;
  database: Database;
  /** Signs cookies and keys the local identity provider's cookies. */
  cookieSecret: string;
  /** Outside services; each defaults to what the config selects (real or offline). */
  providers?: { images?: ImageProvider; portraits?: PortraitProvider; payments?: PaymentProvider };
  /** Replaces the chat engine and models chosen from the config (benchmarks, tests). */
  chat?: ChatSetup;
  /** Replaces the image store chosen from the config (tests of store faults). */
  storage?: ImageStorage;
  /** Where log lines go instead of standard output (tests that read the logs). */
  logStream?: { write(line: string): void };
}

export interface App {
  server: FastifyInstance;
  services: {
    ledger: LedgerService;
    auth: AuthService;
    images: ImageService;
    thumbnails: Thumbnails;
    chat: ChatService;
    portraits: PortraitService;
    payments: PaymentsService;
  };
  storage: ImageStorage;
}

export async function buildApp(deps: AppDeps): Promise<App> {
  // Every picture is read once (an upload, a render, a thumbnail): libvips' cache of
  // recent operations would only hold their pixels in memory.
  sharp.cache(false);
  const { config, database } = deps;
  const server = Fastify({
    logger: {
      level: config.LOG_LEVEL,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
      // The sign-in callback's code and state never reach a log (server/http/log.ts).
      serializers: { req: requestForLog },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Only the configured balancers (a hop count or their addresses) may name the
    // client's address; off by default (server/config.ts, TRUST_PROXY).
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    bodyLimit: 1024 * 1024,
    // A request must arrive whole within REQUEST_TIMEOUT_MS and its headers within
    // HEADERS_TIMEOUT_MS, or it gets 408 in our shape (server/http/client-errors.ts) and
    // its connection is closed: a trickled body no longer holds a connection forever.
    // Node checks the clocks every connectionsCheckingInterval, so that interval is a
    // small part of the shorter timeout.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    http: {
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(config.HEADERS_TIMEOUT_MS / 4))),
    },
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    // Graceful shutdown: close() stops accepting, ends idle keep-alive connections and
    // waits for requests in flight; those still running after SHUTDOWN_GRACE_MS are cut.
    forceCloseConnections: 'idle',
  });
  // An empty JSON body reads as no body (as a request without a content type does), so
  // e.g. POST /llm/conversations with nothing to say creates a conversation.
  const defaultJsonParser = server.getDefaultJsonParser('error', 'error');
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    // The default parser is callback-style; its declared return type covers the promise form too.
    void defaultJsonParser(request, text, done);
  });
  let cutTimer: NodeJS.Timeout | undefined;
  server.addHook('preClose', async () => {
    const cut = () => server.server.closeAllConnections();
    if (config.SHUTDOWN_GRACE_MS <= 0) cut();
    else {
      cutTimer = setTimeout(cut, config.SHUTDOWN_GRACE_MS);
      cutTimer.unref();
    }
  });
  server.addHook('onClose', async () => clearTimeout(cutTimer));
  server.setValidatorCompiler(validatorCompiler);
  server.setSerializerCompiler(serializerCompiler);
  server.decorateRequest('user', null);

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
  await server.register(cookie, { secret: deps.cookieSecret });
  // The built SPA's files come first: registered before the compression and rate-limit
  // plugins, they are sent as compressed at build time and never counted (server/http/web.ts).
  const indexHtml = await registerWebAssets(server, config.webDir);
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

  server.setErrorHandler((error: FastifyError & { appCode?: ErrorCode }, request, reply) => {
    if (isClientGone(error, request)) {
      // Nobody is left to answer, and nothing failed on our side.
      request.log.info({ reason: error.message }, 'client went away before the answer');
      return reply.status(499).send();
    }
    const { code, status, message } = classify(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code, message: error.message }, 'request rejected');
    const body: ErrorBody = {
      success: false,
      code,
      message,
      ...(status >= 500 ? { requestId: request.id } : {}),
    };
    if (isAppError(error) && error.details && status < 500) Object.assign(body, { details: error.details });
    return reply.status(status).send(body);
  });

  const ledger = new LedgerService(database.db);
  const auth = new AuthService(database.db, ledger, {
    sessionTtlDays: config.SESSION_TTL_DAYS,
    starterTokens: config.STARTER_TOKENS,
  });

  const redirectUri = `${config.appUrl}${CALLBACK_PATH}`;
  let oidc: OidcClient;
  if (config.GOOGLE_CLIENT_ID && config.GOOGLE_CLIENT_SECRET) {
    oidc = new OidcClient({
      issuer: config.GOOGLE_ISSUER,
      clientId: config.GOOGLE_CLIENT_ID,
      clientSecret: config.GOOGLE_CLIENT_SECRET,
      redirectUri,
      allowInsecure: false,
      prompt: 'select_account',
    });
  } else {
    const clientSecret = `dev-${deps.cookieSecret.slice(0, 24)}`;
    await mountDevIdentityProvider(server, {
      appUrl: config.appUrl,
      clientSecret,
      redirectUri,
      cookieKeys: [deps.cookieSecret],
      trustProxy: config.TRUST_PROXY !== false,
    });
    oidc = new OidcClient({
      issuer: `${config.appUrl}/dev-idp`,
      clientId: DEV_CLIENT_ID,
      clientSecret,
      redirectUri,
      allowInsecure: config.appUrl.startsWith('http://'),
      promptAfterLogout: 'login',
    });
  }

  authRoutes(server, { config, auth, oidc });

  const storage = deps.storage ?? (await createImageStorage(config));
  const thumbnails = new Thumbnails(database.db, storage, (error, imageId) =>
    server.log.warn({ err: error, imageId }, 'thumbnail not made'),
  );
  // Thumbnails asked for by answers already sent are finished before the process exits.
  server.addHook('onClose', () => thumbnails.drain());
  const paidJobs = new PaidJobs(database.db, ledger, storage, thumbnails, (error) =>
    server.log.warn({ err: error }, 'generation heartbeat failed'),
  );
  const images = new ImageService(
    database.db,
    paidJobs,
    deps.providers?.images ?? createImageProvider(config),
    storage,
    { appUrl: config.appUrl, providerTimeoutMs: config.STABILITY_TIMEOUT_MS },
  );
  imageRoutes(server, { auth, images, storage });
  startReconciler(server, images, config.GENERATION_RECONCILE_INTERVAL_MS);
  startOrphanSweep(server, images, config.IMAGE_SWEEP_INTERVAL_MS);

  const portraits = new PortraitService(
    database.db,
    paidJobs,
    deps.providers?.portraits ?? createPortraitProvider(config),
    storage,
    {
      appUrl: config.appUrl,
      providerTimeoutMs: config.REPLICATE_TIMEOUT_MS,
    },
  );
  // Portraits are paid jobs too: the images reconciler above refunds any whose heartbeat stopped.
  portraitRoutes(server, { auth, portraits, appOrigin });
  // The process's temporary upload folder goes with its server (server/uploads/spool.ts).
  server.addHook('onClose', () => releaseSpoolFolder());

  const chatSetup = deps.chat ?? chatSetupFor(config);
  const chat = new ChatService(database.db, chatSetup.engine, chatSetup.models);
  chatRoutes(server, { config, auth, chat });
  startChatReconciler(server, chat, {
    intervalMs: config.CHAT_RECONCILE_INTERVAL_MS,
  });

  const paymentProvider = deps.providers?.payments ?? createPaymentProvider(config, database.db);
  const payments = new PaymentsService(
    database.db,
    ledger,
    paymentProvider,
    {
      appUrl: config.appUrl,
      recheckAfterMs: config.PAYMENTS_RECHECK_AFTER_MS,
      expireAfterMs: config.PAYMENTS_EXPIRE_AFTER_MS,
      leaseMs: 5 * 60_000,
      retryIntervalMs: config.SUBSCRIPTION_RETRY_INTERVAL_MS,
      maxRetries: config.SUBSCRIPTION_MAX_RETRIES,
    },
    server.log,
  );
  paymentRoutes(server, { auth, payments, webhookSenders: config.YOOKASSA_WEBHOOK_IPS });
  if (paymentProvider instanceof SandboxProvider) sandboxRoutes(server, { sandbox: paymentProvider, payments, auth });
  startPaymentJobs(server, payments, {
    reconcileMs: config.PAYMENTS_RECONCILE_INTERVAL_MS,
    renewalMs: config.SUBSCRIPTION_RENEWAL_INTERVAL_MS,
  });

  // Probes are never rate limited: a balancer asking every second from one address must
  // not take an instance out of its pool.
  const probe = { config: { rateLimit: false } } as const;
  server.get('/readyz', probe, async (request, reply) => {
    const checks: Record<string, string> = {};
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
  server.get('/metrics', probe, async (request, reply) => {
    if (!config.METRICS_TOKEN) throw new AppError('NOT_FOUND');
    const presented = Buffer.from(request.headers.authorization ?? '');
    const expected = Buffer.from(`Bearer ${config.METRICS_TOKEN}`);
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      throw new AppError('UNAUTHORIZED');
    }
    const { contentType, body } = await metricsText();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });

  server.get('/healthz', probe, async (request, reply) => {
    try {
      await database.ping();
      return { status: 'ok', database: database.kind };
    } catch (error) {
      request.log.error({ err: error }, 'health check failed');
      return reply.status(503).send({ status: 'unavailable', database: database.kind });
    }
  });

  registerPageFallback(server, indexHtml);

  return { server, services: { ledger, auth, images, thumbnails, chat, portraits, payments }, storage };
}

/** Refunds generations a crash left PENDING, on an interval, for as long as the server runs. */
function startReconciler(server: FastifyInstance, images: Pick<ImageService, 'reconcile'>, intervalMs: number): void {
  runEvery(server, 'generation reconciler', intervalMs, async () => {
    const refunded = await images.reconcile();
    countReconcilerAction('generation', 'refunded', refunded);
    if (refunded > 0) server.log.warn({ refunded }, 'refunded abandoned generations');
  });
}

/** A validation issue's own code (storedText's INVALID_TEXT), else VALIDATION_ERROR. */
function validationCodeOf(issue: unknown): ErrorCode {
  const code = issueErrorCode(issue);
  return code === 'INVALID_TEXT' ? 'INVALID_TEXT' : 'VALIDATION_ERROR';
}

/** Removes stored files a crash left without their row (ImageService.sweepOrphanFiles). */
function startOrphanSweep(server: FastifyInstance, images: ImageService, intervalMs: number): void {
  runEvery(server, 'orphan image sweep', intervalMs, async () => {
    const removed = await images.sweepOrphanFiles();
    if (removed > 0) server.log.warn({ removed }, 'removed image files without a row');
  });
}

function classify(error: FastifyError & { appCode?: ErrorCode }): { code: ErrorCode; status: number; message: string } {
  if (isAppError(error)) return { code: error.code, status: error.status, message: error.message };
  if (error.appCode)
    return {
      code: error.appCode,
      status: errorCatalogue[error.appCode].status,
      message: errorCatalogue[error.appCode].message,
    };
  if (error instanceof ZodError) {
    return {
      code: validationCodeOf(error.issues[0]),
      status: 400,
      message: error.issues[0]?.message ?? errorCatalogue.VALIDATION_ERROR.message,
    };
  }
  if (error.validation) {
    // fastify-type-provider-zod puts the zod issues on `validation`, the issue's own
    // fields (a custom issue's `params`) under `params`.
    const first = error.validation[0];
    return {
      code: validationCodeOf(first?.params),
      status: 400,
      message: first?.message ?? errorCatalogue.VALIDATION_ERROR.message,
    };
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return { code: 'PAYLOAD_TOO_LARGE', status: 413, message: 'Request body is too large' };
  if (error.statusCode === 429)
    return { code: 'RATE_LIMITED', status: 429, message: errorCatalogue.RATE_LIMITED.message };
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return {
      code: error.statusCode === 404 ? 'NOT_FOUND' : 'VALIDATION_ERROR',
      status: error.statusCode,
      message: errorCatalogue.VALIDATION_ERROR.message,
    };
  }
  return { code: 'INTERNAL', status: 500, message: errorCatalogue.INTERNAL.message };
}
