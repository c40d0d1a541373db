import type { FastifyInstance } from 'fastify';
import type { AuthService } from '../auth/service';
import type { Config } from '../config';
import type { Db } from '../db/client';
import type { ImageStorage } from '../images/storage';
import type { JobQueue } from '../jobs/queue';
import type { PortraitProvider } from '../providers/portraits/types';
import { releaseSpoolFolder } from '../uploads/spool';
import { portraitRoutes } from './routes';
import { PortraitService } from './service';

/**
 * Portraits (POST /api/face-swap/generate). They are durable jobs like generations
 * (server/jobs), in a lane of their own.
 */
export function registerPortraits(
  server: FastifyInstance,
  deps: {
    config: Config;
    db: Db;
    auth: AuthService;
    jobs: JobQueue;
    storage: ImageStorage;
    provider: PortraitProvider;
  },
): PortraitService {
  const { config } = deps;
  const portraits = new PortraitService(deps.db, deps.jobs, deps.provider, deps.storage, {
    appUrl: config.appUrl,
    providerTimeoutMs: config.REPLICATE_TIMEOUT_MS,
  });
  portraitRoutes(server, { auth: deps.auth, portraits, appOrigin: new URL(config.appUrl).origin });
  // The process's temporary upload folder goes with its server (server/uploads/spool.ts).
  server.addHook('onClose', () => releaseSpoolFolder());
  return portraits;
}
