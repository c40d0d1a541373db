import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { openDatabase } from '../../server/db/client';

/**
 * Every server test file used to create its databases from nothing and run every migration
 * on each (about 40 times per run, and again on PostgreSQL). Here the migrations run once per
 * run, on one embedded and one PostgreSQL database, and the tests copy those
 * (tests/server/helpers.ts). The copies still open through openDatabase, whose migrate then
 * finds every migration applied.
 */

/** Where the workers find the templates (the environment is handed to them). */
export const PGLITE_TEMPLATE_ENV = 'IMAGEGEN_TEST_PGLITE_TEMPLATE';
export const POSTGRES_TEMPLATE_ENV = 'IMAGEGEN_TEST_POSTGRES_TEMPLATE';

const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../server/db/migrations');

/** A new embedded database with every committed migration, as a dumpDataDir() tarball. */
export async function buildPgliteTemplate(): Promise<Blob> {
  const client = await PGlite.create({ extensions: { pg_trgm, btree_gin } });
  try {
    await migrate(drizzle(client), { migrationsFolder });
    return await client.dumpDataDir('none');
  } finally {
    await client.close();
  }
}

/**
 * A migrated database on the server of `adminUrl` to copy with CREATE DATABASE ... TEMPLATE.
 * Migrated through openDatabase itself, and closed: a template must have no connections
 * while it is copied.
 */
export async function createPostgresTemplate(adminUrl: string): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `tpl_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    const database = await openDatabase({ kind: 'postgres', url: url.href, poolSize: 1 });
    await database.close();
  } catch (error) {
    await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    throw error;
  }
  return { name, drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

export default async function setup() {
  // The server and server-scale projects name this setup both: one pair of templates serves
  // the run, made by the first and removed by its teardown.
  if (process.env[PGLITE_TEMPLATE_ENV]) return;
  const adminUrl = process.env.TEST_DATABASE_URL;
  const template = adminUrl
    ? await createPostgresTemplate(adminUrl).catch((error: unknown) => {
        throw new Error(
          `these tests need PostgreSQL: TEST_DATABASE_URL=${adminUrl} did not answer (${String(error)}); start it`,
          { cause: error },
        );
      })
    : undefined;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'imagegen-db-template-'));
  const teardown = async () => {
    delete process.env[PGLITE_TEMPLATE_ENV];
    delete process.env[POSTGRES_TEMPLATE_ENV];
    await template?.drop();
    await fs.rm(dir, { recursive: true, force: true });
  };
  try {
    const file = path.join(dir, 'pglite.tar');
    await fs.writeFile(file, Buffer.from(await (await buildPgliteTemplate()).arrayBuffer()));
    process.env[PGLITE_TEMPLATE_ENV] = file;
    if (template) process.env[POSTGRES_TEMPLATE_ENV] = template.name;
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}
