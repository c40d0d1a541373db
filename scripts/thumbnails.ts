import path from 'node:path';
import { parseConfig } from '../server/config';
import { openDatabase } from '../server/db/client';
import { ImageService } from '../server/images/service';
import { createImageStorage, readStoredFile } from '../server/images/storage';
import { PaidJobs } from '../server/jobs/paid-job';
import { LedgerService } from '../server/ledger/service';
import { createImageProvider } from '../server/providers/images/factory';

/**
 * `npm run thumbnails`: the one-off job that gives images stored before thumbnails
 * existed their WebP thumbnail. Safe to run again and beside running instances.
 */
const config = parseConfig();
const database = await openDatabase(
  config.DATABASE_URL
    ? { kind: 'postgres', url: config.DATABASE_URL }
    : { kind: 'pglite', dataDir: path.join(config.dataDir, 'db') },
);
const storage = await createImageStorage(config);
const jobs = new PaidJobs(database.db, new LedgerService(database.db), storage);
const images = new ImageService(database.db, jobs, createImageProvider(config), storage, {
  appUrl: config.appUrl,
  providerTimeoutMs: config.STABILITY_TIMEOUT_MS,
});
try {
  const made = await images.backfillThumbnails(async (fileName) => {
    const bytes = await readStoredFile(storage, fileName);
    if (!bytes) throw new Error(`stored image missing: ${fileName}`);
    return bytes;
  });
  console.log(`thumbnails made: ${made}`);
} finally {
  await database.close();
}
