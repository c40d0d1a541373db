import type { FastifyInstance, RouteOptions } from 'fastify';
import sharp from 'sharp';
import { registerAuth } from './auth/feature';
import type { AuthService } from './auth/service';
import { registerChat } from './chat/feature';
import { chatSetupFor, type ChatSetup } from './chat/models';
import type { ChatService } from './chat/service';
import type { Config } from './config';
import type { Database } from './db/client';
import { registerErrorHandler } from './http/error-handler';
import { registerApiDocs } from './http/openapi';
import { registerPlugins } from './http/plugins';
import { probeRoutes } from './http/probes';
import { createServer } from './http/server';
import { registerPageFallback } from './http/web';
import { createThumbnails, registerImages } from './images/feature';
import { registerJobs } from './jobs/feature';
import type { JobQueue } from './jobs/queue';
import type { Bus } from './events/bus';
import type { EventLog } from './events/service';
import type { ImageService } from './images/service';
import { createImageStorage, type ImageStorage } from './images/storage';
import type { Thumbnails } from './images/thumbnails';
import { LedgerService } from './ledger/service';
import { registerPayments } from './payments/feature';
import type { PaymentsService } from './payments/service';
import { registerPortraits } from './portraits/feature';
import type { PortraitService } from './portraits/service';
import { createImageProvider } from './providers/images/factory';
import type { ImageProvider } from './providers/images/types';
import { createPaymentProvider } from './providers/payments/factory';
import type { PaymentProvider } from './providers/payments/types';
import { createPortraitProvider } from './providers/portraits/factory';
import type { PortraitProvider } from './providers/portraits/types';

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
  /** Replaces the bus between instances chosen from the config (tests of several instances in one process). */
  bus?: Bus;
  /** Told of every route as it is added (the test that every route is described). */
  onRoute?: (route: RouteOptions) => void;
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
    jobs: JobQueue;
    events: EventLog;
  };
  storage: ImageStorage;
}

/**
 * The server: the plugins every answer goes through, the error handler, the API's
 * description, then each feature with its routes and background jobs, the probes and
 * the page fallback last.
 */
export async function buildApp(deps: AppDeps): Promise<App> {
  // Every picture is read once (an upload, a render, a thumbnail): libvips' cache of
  // recent operations would only hold their pixels in memory.
  sharp.cache(false);
  const { config, database } = deps;
  const db = database.db;
  const server = createServer(config, deps.logStream);
  if (deps.onRoute) server.addHook('onRoute', deps.onRoute);
  const { pages, redis } = await registerPlugins(server, config, deps.cookieSecret);
  registerErrorHandler(server);
  await registerApiDocs(server, config);

  const ledger = new LedgerService(db);
  const auth = await registerAuth(server, { config, db, ledger, cookieSecret: deps.cookieSecret });

  const storage = deps.storage ?? (await createImageStorage(config));
  const thumbnails = createThumbnails(server, db, storage);
  const { jobs, events } = await registerJobs(server, {
    config,
    database,
    ledger,
    auth,
    storage,
    thumbnails,
    redis,
    bus: deps.bus,
  });
  const images = registerImages(server, {
    config,
    db,
    auth,
    storage,
    jobs,
    provider: deps.providers?.images ?? createImageProvider(config),
  });
  const portraits = registerPortraits(server, {
    config,
    db,
    auth,
    jobs,
    storage,
    provider: deps.providers?.portraits ?? createPortraitProvider(config),
  });
  const chat = registerChat(server, { config, db, auth, setup: deps.chat ?? chatSetupFor(config), events });

  const payments = registerPayments(server, {
    config,
    db,
    ledger,
    auth,
    provider: deps.providers?.payments ?? createPaymentProvider(config, db),
  });

  probeRoutes(server, { config, database, storage, redis });
  registerPageFallback(server, pages);

  return { server, services: { ledger, auth, images, thumbnails, chat, portraits, payments, jobs, events }, storage };
}
