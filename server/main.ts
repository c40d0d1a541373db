import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildApp } from './app';
import { ConfigError, parseConfig, type Config } from './config';
import { openDatabase } from './db/client';

/**
 * Cookie signing needs a secret shared by every instance. COOKIE_SECRET sets it; on a
 * single machine one is created once under DATA_DIR so sessions survive restarts.
 */
async function cookieSecretFor(config: Config): Promise<string> {
  if (config.COOKIE_SECRET) return config.COOKIE_SECRET;
  const file = path.join(config.dataDir, 'cookie-secret');
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    await fs.mkdir(config.dataDir, { recursive: true });
    const secret = randomBytes(32).toString('base64url');
    await fs.writeFile(file, secret, { mode: 0o600 });
    return secret;
  }
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = parseConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }

  const database = await openDatabase(
    config.DATABASE_URL
      ? { kind: 'postgres', url: config.DATABASE_URL }
      : { kind: 'pglite', dataDir: path.join(config.dataDir, 'db') },
  );
  const { server } = await buildApp({ config, database, cookieSecret: await cookieSecretFor(config) });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    server.log.info({ signal }, 'shutting down');
    // Requests in flight get SHUTDOWN_GRACE_MS to finish; this is the last resort after it.
    const force = setTimeout(() => process.exit(1), config.SHUTDOWN_GRACE_MS + 5_000);
    force.unref();
    try {
      await server.close();
      await database.close();
      process.exit(0);
    } catch (error) {
      server.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await server.listen({ port: config.PORT, host: config.HOST });
  server.log.info({ url: config.appUrl, database: database.kind }, 'ready');
}

await main();
