import type { FastifyInstance } from 'fastify';
import type { AuthService } from '../auth/service';
import type { Config } from '../config';
import type { Db } from '../db/client';
import type { ImageStorage } from '../images/storage';
import type { PaidJobs } from '../jobs/paid-job';
import type { PortraitProvider } from '../providers/portraits/types';
import { releaseSpoolFolder } from '../uploads/spool';
import { portraitRoutes } from './routes';
import { PortraitService } from './service';

/**
 * Portraits (POST /api/face-swap/generate). They are paid jobs like generations: the
 * images feature's reconciler refunds any whose heartbeat stopped.
 */
export function registerPortraits(
  server: FastifyInstance,
  deps: {
    config: Config;
    db: Db;
    auth: AuthService;
    paidJobs: PaidJobs;
    storage: ImageStorage;
    provider: PortraitProvider;
  },
): PortraitService {
  const { config } = deps;
  const portraits = new PortraitService(deps.db, deps.paidJobs, deps.provider, deps.storage, {
    appUrl: config.appUrl,
    providerTimeoutMs: config.REPLICATE_TIMEOUT_MS,
  });
  portraitRoutes(server, { auth: deps.auth, portraits, appOrigin: new URL(config.appUrl).origin });
  // The process's temporary upload folder goes with its server (server/uploads/spool.ts).
  server.addHook('onClose', () => releaseSpoolFolder());
  return portraits;
}
