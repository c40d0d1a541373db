import path from 'node:path';
import { parseConfig } from '../server/config';
import { openDatabase } from '../server/db/client';
import { createImageStorage, readStoredFile } from '../server/images/storage';
import { Thumbnails } from '../server/images/thumbnails';

/**
 * `npm run thumbnails`: gives images stored without a thumbnail (before thumbnails existed,
 * or whose thumbnail was never made) their WebP thumbnail. Safe to run again and beside
 * running instances.
 */
const config = parseConfig();
const database = await openDatabase(
  config.DATABASE_URL
    ? { kind: 'postgres', url: config.DATABASE_URL }
    : { kind: 'pglite', dataDir: path.join(config.dataDir, 'db') },
);
const storage = await createImageStorage(config);
const thumbnails = new Thumbnails(database.db, storage);
try {
  const made = await thumbnails.backfill(async (fileName) => {
    const bytes = await readStoredFile(storage, fileName);
    if (!bytes) throw new Error(`stored image missing: ${fileName}`);
    return bytes;
  });
  console.log(`thumbnails made: ${made}`);
} finally {
  await database.close();
}
