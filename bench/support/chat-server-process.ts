import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../server/app';
import { parseConfig } from '../../server/config';
import { openDatabase } from '../../server/db/client';
import { serveParent } from './child';

/**
 * The app as `npm start` runs it (embedded PGlite on disk, production mode, request logs
 * at the default level), talking to the OpenAI-compatible service at OPENAI_BASE_URL. The parent can top a user up and
 * ask for this process's peak memory over a stretch of time.
 */
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'chat-bench-'));
const config = parseConfig(
  {
    NODE_ENV: 'production',
    PORT: process.env.PORT ?? '0',
    DATA_DIR: dataDir,
    RATE_LIMIT_PER_MINUTE: '1000000',
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: process.env.OPENAI_BASE_URL ?? '',
    OPENAI_MAX_RETRIES: '0',
    CHAT_RECONCILE_INTERVAL_MS: '0',
  },
  { webDir: undefined },
);
const database = await openDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
const app = await buildApp({ config, database, cookieSecret: randomBytes(32).toString('base64url') });
await app.server.listen({ port: config.PORT, host: '127.0.0.1' });

let sampler: ReturnType<typeof setInterval> | undefined;
let baseline = process.memoryUsage();
let peak = { rss: 0, heapUsed: 0 };

serveParent(async (request) => {
  switch (request.type) {
    case 'ready':
      return null;
    case 'credit':
      return app.services.ledger.credit({
        userId: request.userId as number,
        amount: request.amount as number,
        reason: 'purchase',
        idempotencyKey: `bench:${request.userId as number}:${Date.now()}`,
      });
    case 'memory:start':
      global.gc?.();
      baseline = process.memoryUsage();
      peak = { rss: baseline.rss, heapUsed: baseline.heapUsed };
      sampler = setInterval(() => {
        const now = process.memoryUsage();
        peak = { rss: Math.max(peak.rss, now.rss), heapUsed: Math.max(peak.heapUsed, now.heapUsed) };
      }, 20);
      return null;
    case 'memory:stop':
      clearInterval(sampler);
      return { rss: peak.rss - baseline.rss, heapUsed: peak.heapUsed - baseline.heapUsed };
    default:
      throw new Error(`unknown request ${request.type}`);
  }
});

process.on('SIGTERM', () => {
  void (async () => {
    await app.server.close();
    await database.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    process.exit(0);
  })();
});
