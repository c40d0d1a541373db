import type { FastifyInstance } from 'fastify';
import type { Config } from '../config';
import type { Db } from '../db/client';
import type { JobQueue } from '../jobs/queue';
import { runEvery } from '../background/periodic';
import type { ImageProvider } from '../providers/images/types';
import { imageRoutes } from './routes';
import { ImageService } from './service';
import type { ImageStorage } from './storage';
import { Thumbnails } from './thumbnails';
import type { AuthService } from '../auth/service';

/** The list thumbnails (server/images/thumbnails.ts), finished before the process exits. */
export function createThumbnails(server: FastifyInstance, db: Db, storage: ImageStorage): Thumbnails {
  const thumbnails = new Thumbnails(db, storage, (error, imageId) =>
    server.log.warn({ err: error, imageId }, 'thumbnail not made'),
  );
  server.addHook('onClose', () => thumbnails.drain());
  return thumbnails;
}

/**
 * Image generation (SPEC section 7's model endpoints, run as durable jobs: server/jobs),
 * the gallery and the stored files, with the sweep of files left without a row.
 */
export function registerImages(
  server: FastifyInstance,
  deps: {
    config: Config;
    db: Db;
    auth: AuthService;
    storage: ImageStorage;
    jobs: JobQueue;
    provider: ImageProvider;
  },
): ImageService {
  const { config, db, storage } = deps;
  const images = new ImageService(db, deps.jobs, deps.provider, storage, {
    appUrl: config.appUrl,
    providerTimeoutMs: config.STABILITY_TIMEOUT_MS,
  });
  imageRoutes(server, { auth: deps.auth, images, storage });

  // Removes stored files a crash left without their row (ImageService.sweepOrphanFiles).
  runEvery(server, 'orphan image sweep', config.IMAGE_SWEEP_INTERVAL_MS, async () => {
    const removed = await images.sweepOrphanFiles();
    if (removed > 0) server.log.warn({ removed }, 'removed image files without a row');
  });
  return images;
}
