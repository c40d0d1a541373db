import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type App, type AppDeps } from '../../server/app';
import { parseConfig } from '../../server/config';
import { openDatabase, type Database } from '../../server/db/client';
import { openFreshPostgres } from '../../tests/server/helpers';

/**
 * The app as `npm start` runs it (embedded PGlite on disk in a fresh DATA_DIR, production
 * mode, request logs at the default level) on PORT, for a benchmark's app process. With
 * BENCH_POSTGRES_URL it runs on a fresh database of that PostgreSQL server instead.
 * `env` adds to the configuration; SIGTERM closes it and removes its data.
 */
export async function startBenchApp(
  env: Record<string, string>,
  deps: Pick<AppDeps, 'providers'> = {},
): Promise<App & { database: Database }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-app-'));
  const config = parseConfig(
    {
      NODE_ENV: 'production',
      PORT: process.env.PORT ?? '0',
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '1000000',
      ...env,
    },
    { webDir: undefined },
  );
  const postgres = process.env.BENCH_POSTGRES_URL;
  const database = postgres
    ? await openFreshPostgres(postgres)
    : await openDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
  const app = await buildApp({ config, database, cookieSecret: randomBytes(32).toString('base64url'), ...deps });
  await app.server.listen({ port: config.PORT, host: '127.0.0.1' });
  process.on('SIGTERM', () => {
    void (async () => {
      await app.server.close();
      await database.close();
      await fs.rm(dataDir, { recursive: true, force: true });
      process.exit(0);
    })();
  });
  return Object.assign(app, { database });
}
