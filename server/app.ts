import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import cookie from '@fastify/cookie';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';
import { errorCatalogue, type ErrorBody, type ErrorCode } from '../src/domain/errors';
import { spaRoutePatterns } from '../src/domain/routes';
import { mountDevIdentityProvider, DEV_CLIENT_ID } from './auth/dev-idp';
import { OidcClient } from './auth/oidc';
import { authRoutes, CALLBACK_PATH } from './auth/routes';
import { AuthService } from './auth/service';
import { chatSetupFor, type ChatSetup } from './chat/models';
import { startChatReconciler } from './chat/reconciler';
import { chatRoutes } from './chat/routes';
import { ChatService } from './chat/service';
import type { Config } from './config';
import type { Database } from './db/client';
import { isAppError } from './errors';
import { imageRoutes } from './images/routes';
import { ImageService } from './images/service';
import { ImageStorage } from './images/storage';
import { LedgerService } from './ledger/service';
import { createImageProvider } from './providers/images/factory';
import type { ImageProvider } from './providers/images/types';

export interface AppDeps {
  config: Config;
  database: Database;
  /** Signs cookies and keys the local identity provider's cookies. */
  cookieSecret: string;
  /** Outside services; each defaults to what the config selects (real or offline). */
  providers?: { images?: ImageProvider };
  /** Replaces the chat engine and models chosen from the config (benchmarks, tests). */
  chat?: ChatSetup;
}

export interface App {
  server: FastifyInstance;
  services: { ledger: LedgerService; auth: AuthService; images: ImageService; chat: ChatService };
}

/** API prefixes: never answered with the SPA. */
const API_PREFIXES = ['/api/', '/auth/', '/llm/', '/images/', '/dev-idp', '/healthz'];

export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, database } = deps;
  const server = Fastify({
    logger: { level: config.LOG_LEVEL, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY,
    bodyLimit: 1024 * 1024,
    forceCloseConnections: true,
  });
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
  await server.register(rateLimit, {
    max: config.RATE_LIMIT_PER_MINUTE,
    timeWindow: 60_000,
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
      trustProxy: config.TRUST_PROXY,
    });
    oidc = new OidcClient({
      issuer: `${config.appUrl}/dev-idp`,
      clientId: DEV_CLIENT_ID,
      clientSecret,
      redirectUri,
      allowInsecure: config.appUrl.startsWith('http://'),
    });
  }

  authRoutes(server, { config, auth, oidc });

  const storage = new ImageStorage(config.imagesDir);
  const images = new ImageService(database.db, ledger, deps.providers?.images ?? createImageProvider(config), storage, {
    appUrl: config.appUrl,
    providerTimeoutMs: config.STABILITY_TIMEOUT_MS,
    reconcileGraceMs: config.GENERATION_RECONCILE_GRACE_MS,
  });
  imageRoutes(server, { auth, images, storage });
  startReconciler(server, images, config.GENERATION_RECONCILE_INTERVAL_MS);

  const chatSetup = deps.chat ?? chatSetupFor(config);
  const chat = new ChatService(database.db, chatSetup.engine, chatSetup.models);
  chatRoutes(server, { config, auth, chat });
  startChatReconciler(server, chat, {
    intervalMs: config.CHAT_RECONCILE_INTERVAL_MS,
    staleAfterMs: config.CHAT_STALE_AFTER_MS,
  });

  server.get('/healthz', async (request, reply) => {
    try {
      await database.ping();
      return { status: 'ok', database: database.kind };
    } catch (error) {
      request.log.error({ err: error }, 'health check failed');
      return reply.status(503).send({ status: 'unavailable', database: database.kind });
    }
  });

  registerSpa(server, config);

  return { server, services: { ledger, auth, images, chat } };
}

/** Refunds generations a crash left PENDING, on an interval, for as long as the server runs. */
function startReconciler(server: FastifyInstance, images: ImageService, intervalMs: number): void {
  if (intervalMs <= 0) return;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    images
      .reconcile()
      .then((refunded) => {
        if (refunded > 0) server.log.warn({ refunded }, 'refunded abandoned generations');
      })
      .catch((error: unknown) => server.log.error({ err: error }, 'generation reconciler failed'))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  server.addHook('onClose', async () => clearInterval(timer));
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
      code: 'VALIDATION_ERROR',
      status: 400,
      message: error.issues[0]?.message ?? errorCatalogue.VALIDATION_ERROR.message,
    };
  }
  if (error.validation) {
    // fastify-type-provider-zod puts the zod issues on `validation`.
    const first = error.validation[0];
    return {
      code: 'VALIDATION_ERROR',
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

/**
 * The built SPA: hashed assets cached for a year, index.html never cached, and a history
 * fallback so a reload on any SPEC route works. Unknown non-API pages get the SPA with a
 * 404 status (it renders its own not-found view); unknown API paths get JSON.
 */
function registerSpa(server: FastifyInstance, config: Config): void {
  const webDir = config.webDir;
  const indexPath = webDir ? path.join(webDir, 'index.html') : undefined;
  const hasSpa = indexPath !== undefined && fs.existsSync(indexPath);
  if (hasSpa && webDir) {
    void server.register(fastifyStatic, {
      root: webDir,
      wildcard: false,
      index: false,
      setHeaders: (reply, filePath) => {
        const immutable = filePath.includes(`${path.sep}assets${path.sep}`);
        reply.header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  }
  const isSpaRoute = (url: string) => spaRoutePatterns.some((pattern) => pattern.test(url));
  server.setNotFoundHandler(async (request, reply) => {
    const pathname = request.url.split('?')[0] ?? '/';
    const wantsHtml = request.method === 'GET' && !API_PREFIXES.some((p) => pathname.startsWith(p));
    if (hasSpa && wantsHtml) {
      reply.header('cache-control', 'no-cache');
      return reply
        .status(isSpaRoute(pathname) ? 200 : 404)
        .type('text/html')
        .send(fs.createReadStream(indexPath));
    }
    const body: ErrorBody = { success: false, code: 'NOT_FOUND', message: errorCatalogue.NOT_FOUND.message };
    return reply.status(404).send(body);
  });
}
