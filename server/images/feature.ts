import type { FastifyInstance } from 'fastify';
import type { Config } from '../config';
import type { Db } from '../db/client';
import { PaidJobs } from '../jobs/paid-job';
import { runEvery } from '../jobs/periodic';
import type { LedgerService } from '../ledger/service';
import { countReconcilerAction } from '../metrics';
import type { ImageProvider } from '../providers/images/types';
import { imageRoutes } from './routes';
import { ImageService } from './service';
import type { ImageStorage } from './storage';
import { Thumbnails } from './thumbnails';
import type { AuthService } from '../auth/service';

/**
 * Image generation (SPEC section 7's model endpoints), the gallery and the stored files,
 * with their background jobs: the reconciler that refunds abandoned paid jobs (portraits
 * too) and the sweep of files left without a row.
 */
export function registerImages(
  server: FastifyInstance,
  deps: {
    config: Config;
    db: Db;
    ledger: LedgerService;
    auth: AuthService;
    storage: ImageStorage;
    provider: ImageProvider;
  },
): { images: ImageService; thumbnails: Thumbnails; paidJobs: PaidJobs } {
  const { config, db, storage } = deps;
  const thumbnails = new Thumbnails(db, storage, (error, imageId) =>
    server.log.warn({ err: error, imageId }, 'thumbnail not made'),
  );
  // Thumbnails asked for by answers already sent are finished before the process exits.
  server.addHook('onClose', () => thumbnails.drain());
  const paidJobs = new PaidJobs(db, deps.ledger, storage, thumbnails, (error) =>
    server.log.warn({ err: error }, 'generation heartbeat failed'),
  );
  const images = new ImageService(db, paidJobs, deps.provider, storage, {
    appUrl: config.appUrl,
    providerTimeoutMs: config.STABILITY_TIMEOUT_MS,
  });
  imageRoutes(server, { auth: deps.auth, images, storage });

  // Refunds paid jobs a crash left PENDING, for as long as the server runs.
  runEvery(server, 'generation reconciler', config.GENERATION_RECONCILE_INTERVAL_MS, async () => {
    const refunded = await images.reconcile();
    countReconcilerAction('generation', 'refunded', refunded);
    if (refunded > 0) server.log.warn({ refunded }, 'refunded abandoned generations');
  });
  // Removes stored files a crash left without their row (ImageService.sweepOrphanFiles).
  runEvery(server, 'orphan image sweep', config.IMAGE_SWEEP_INTERVAL_MS, async () => {
    const removed = await images.sweepOrphanFiles();
    if (removed > 0) server.log.warn({ removed }, 'removed image files without a row');
  });
  return { images, thumbnails, paidJobs };
}
