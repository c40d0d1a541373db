import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { sql } from 'drizzle-orm';
import pg from 'pg';
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
  /** Throws unless the database answers (the health check). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The advisory lock key that serialises migrations between instances ("imagegen"). */
const MIGRATION_LOCK = 0x696d6167;

/** The embedded database's buffer cache (see openDatabase). */
const PGLITE_SHARED_BUFFERS = '32MB';

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

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
    return { db, kind: 'postgres', ping: () => ping(db), close: () => pool.end() };
  }
  // PostgreSQL's default 128MB of shared buffers would live in the process's own memory
  // here; the operating system's page cache already keeps the data folder's hot pages.
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`];
  if (options.dataDir) await prepareDataDir(options.dataDir, startParams);
  // pg_trgm and btree_gin: the gallery's per-user prompt search index (migrations 0004, 0006).
  const client = await PGlite.create(options.dataDir, {
    extensions: { pg_trgm, btree_gin },
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
  const require = createRequire(import.meta.url);
  const modules = Object.fromEntries(
    [
      '@electric-sql/pglite',
      '@electric-sql/pglite/contrib/pg_trgm',
      '@electric-sql/pglite/contrib/btree_gin',
      'drizzle-orm/pglite',
      'drizzle-orm/pglite/migrator',
    ].map((name) => [name, require.resolve(name)]),
  );
  const script = `
    const w = JSON.parse(process.argv[1]);
    const { PGlite } = require(w.modules['@electric-sql/pglite']);
    const { pg_trgm } = require(w.modules['@electric-sql/pglite/contrib/pg_trgm']);
    const { btree_gin } = require(w.modules['@electric-sql/pglite/contrib/btree_gin']);
    const { drizzle } = require(w.modules['drizzle-orm/pglite']);
    const { migrate } = require(w.modules['drizzle-orm/pglite/migrator']);
    (async () => {
      const client = await PGlite.create(w.dataDir, { extensions: { pg_trgm, btree_gin }, startParams: w.startParams });
      await migrate(drizzle(client), { migrationsFolder: w.migrationsFolder });
      await client.close();
    })().catch((error) => {
      console.error(error);
      process.exit(1);
    });
  `;
  const job = { modules, dataDir, startParams, migrationsFolder };
  try {
    await promisify(execFile)(process.execPath, ['-e', script, JSON.stringify(job)], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`preparing the embedded database in ${dataDir} failed: ${stderr.trim()}`, { cause: error });
  }
}

async function ping(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}
