import sharp from 'sharp';
import type { ImageJob, ImageProvider } from '../../server/providers/images/types';
import { startBenchApp } from './app';
import { serveParent } from './parent';
import { BENCH_IMAGE_SIZE, benchPixels, encodeBenchImage } from './image';

/**
 * The app as `npm start` runs it, with an instant image provider: it answers every job
 * with the benchmark's 1024x1024 PNG, encoded once at start, so a request costs only what
 * the app itself does with it (validation, ledger, request rows, the file, the response).
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

await startBenchApp({ STARTER_TOKENS: '1000000' }, { providers: { images: provider } });

serveParent(async (request) => {
  if (request.type === 'ready') return null;
  throw new Error(`unknown request ${request.type}`);
});
