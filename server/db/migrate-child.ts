/**
 * A program, not a library: creates an embedded database's data folder (initdb) and
 * applies the migrations, then exits, taking the memory PGlite held for that work with it
 * (server/db/client.ts, prepareDataDir, starts it). Its one argument is a MigrationJob
 * as JSON. Bundled beside the server as migrate-child.mjs (scripts/server-bundle.ts); run
 * from source with tsx.
 */
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { z } from 'zod';
import { PGLITE_EXTENSIONS } from './pglite-extensions';

const migrationJobSchema = z.object({
  dataDir: z.string().min(1),
  startParams: z.array(z.string()),
  migrationsFolder: z.string().min(1),
});

export type MigrationJob = z.infer<typeof migrationJobSchema>;

async function run(job: MigrationJob): Promise<void> {
  const client = await PGlite.create(job.dataDir, { extensions: PGLITE_EXTENSIONS, startParams: job.startParams });
  await migrate(drizzle(client), { migrationsFolder: job.migrationsFolder });
  await client.close();
}

try {
  await run(migrationJobSchema.parse(JSON.parse(process.argv[2] ?? '')));
} catch (error) {
  console.error(error);
  process.exit(1);
}
