import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { buildApp } from '../../server/app';
import { parseConfig } from '../../server/config';
import { openDatabase } from '../../server/db/client';
import type { ImageJob, ImageProvider } from '../../server/providers/images/types';
import { serveParent } from './child';
import { BENCH_IMAGE_SIZE, benchPixels, encodeBenchImage } from './image';

/**
 * The app as `npm start` runs it (embedded PGlite on disk, production mode, request logs
 * at the default level) with an instant image provider: it answers every job with the
 * benchmark's 1024x1024 PNG, encoded once at start, so a request costs only what the app
 * itself does with it (validation, ledger, request rows, the file, the response).
 */
const png = await encodeBenchImage(sharp, await benchPixels(sharp));
const provider: ImageProvider = {
  name: 'bench',
  generate(job: ImageJob) {
    return Promise.resolve({
      bytes: png,
      mimeType: 'image/png',
      width: BENCH_IMAGE_SIZE,
      height: BENCH_IMAGE_SIZE,
      seed: job.seed ?? 1,
      finishReason: 'SUCCESS',
      engine: 'offline',
    });
  },
};

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'generation-bench-'));
const config = parseConfig(
  {
    NODE_ENV: 'production',
    PORT: process.env.PORT ?? '0',
    DATA_DIR: dataDir,
    RATE_LIMIT_PER_MINUTE: '1000000',
    STARTER_TOKENS: '1000000',
  },
  { webDir: undefined },
);
const database = await openDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
const app = await buildApp({
  config,
  database,
  cookieSecret: randomBytes(32).toString('base64url'),
  providers: { images: provider },
});
await app.server.listen({ port: config.PORT, host: '127.0.0.1' });

serveParent(async (request) => {
  if (request.type === 'ready') return null;
  throw new Error(`unknown request ${request.type}`);
});

process.on('SIGTERM', () => {
  void (async () => {
    await app.server.close();
    await database.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    process.exit(0);
  })();
});
