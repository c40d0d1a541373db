import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { MigrationJob } from './migrate-child';
import { PGLITE_EXTENSIONS } from './pglite-extensions';
import { withPreparedStatements } from './pglite-prepared';
import * as schema from './schema';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Repositories accept either the database or a transaction. */
export type Executor = Db | Tx;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** PostgreSQL's address, for a connection of its own (LISTEN, server/events/bus.ts). */
  url?: string;
  /** Throws unless the database answers (the health check). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The advisory lock key that serialises migrations between instances ("imagegen"). */
const MIGRATION_LOCK = 0x696d6167;

/** The embedded database's buffer cache (see openDatabase). */
const PGLITE_SHARED_BUFFERS = '32MB';

const here = path.dirname(fileURLToPath(import.meta.url));
const migrationsFolder = path.join(here, 'migrations');

export type DatabaseOptions =
  | { kind: 'postgres'; url: string; poolSize?: number }
  /**
   * dataDir undefined keeps the database in memory (tests). loadDataDir starts it from a
   * dumpDataDir() tarball instead of an empty cluster (tests copy one migrated database).
   */
  | { kind: 'pglite'; dataDir?: string; loadDataDir?: Blob };

/** Opens the database and applies the committed migrations. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    // An idle connection the server drops (restart, failover, a dropped database) is
    // reported here; without a listener it would crash the process. The pool replaces it.
    pool.on('error', (error) => {
      console.warn(`[db] idle PostgreSQL connection lost: ${error.message}`);
    });
    const db = drizzleNodePg(pool, { schema });
    // Several instances may start at once: one migrates while the others wait for it.
    const lockClient = await pool.connect();
    try {
      await lockClient.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await migrateNodePg(drizzleNodePg(lockClient, { schema }), { migrationsFolder });
    } finally {
      await lockClient.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      lockClient.release();
    }
    return { db, kind: 'postgres', url: options.url, ping: () => ping(db), close: () => pool.end() };
  }
  // PostgreSQL's default 128MB of shared buffers would live in the process's own memory
  // here; the operating system's page cache already keeps the data folder's hot pages.
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`];
  if (options.dataDir) await prepareDataDir(options.dataDir, startParams);
  const client = await PGlite.create(options.dataDir, {
    extensions: PGLITE_EXTENSIONS,
    startParams,
    loadDataDir: options.loadDataDir,
  });
  // Embedded PostgreSQL runs no autovacuum, so its statistics are missing or stale. Then
  // the planner prices an indexed lookup of a few rows as a bitmap scan plus a sort of
  // every matching row (a long conversation's whole history for its newest messages).
  // Every query here is an indexed lookup; plain index scans keep them proportional to
  // what they return.
  await client.exec('set enable_bitmapscan = off');
  const db = drizzlePglite(withPreparedStatements(client), { schema });
  await migratePglite(db, { migrationsFolder });
  // Statistics for what is already stored (a restart of a long-used database).
  await client.exec('analyze');
  return { db, kind: 'pglite', ping: () => ping(db), close: () => client.close() };
}

/**
 * Creating the data folder (initdb) and applying migrations happen in a child process
 * that then exits: PGlite keeps the memory they took (several hundred megabytes for a new
 * folder) in the process that ran them, which the server would carry for its whole life
 * (a worker thread was tried: the process kept half of it).
 * The server then opens a folder that is ready, and its own migrate finds nothing to do.
 */
async function prepareDataDir(dataDir: string, startParams: string[]): Promise<void> {
  await fs.mkdir(dataDir, { recursive: true });
  const job: MigrationJob = { dataDir, startParams, migrationsFolder };
  try {
    await promisify(execFile)(process.execPath, [...(await migrationChild()), JSON.stringify(job)], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`preparing the embedded database in ${dataDir} failed: ${stderr.trim()}`, { cause: error });
  }
}

/**
 * The child's command line: the bundled server runs migrate-child.mjs beside it in plain
 * Node (scripts/server-bundle.ts); from source (tsx, tests) it is the TypeScript module.
 */
async function migrationChild(): Promise<string[]> {
  const bundled = path.join(here, 'migrate-child.mjs');
  const exists = await fs.access(bundled).then(
    () => true,
    () => false,
  );
  // tsx is found from here, not from the working directory the server was started in.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return exists ? [bundled] : ['--import', tsx, path.join(here, 'migrate-child.ts')];
}

async function ping(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}
