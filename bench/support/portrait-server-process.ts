import sharp from 'sharp';
import type { PortraitJob, PortraitProvider } from '../../server/providers/portraits/types';
import { startBenchApp } from './app';
import { serveParent } from './parent';

/**
 * The app as `npm start` runs it, with an instant portrait provider: it answers every job
 * with one small WebP made at start, so a request costs only what the app itself does
 * (multipart parsing, checks, the photo's decode and re-encode, ledger, storage). Answers
 * `memory` with this process's resident set size.
 */
const webp = await sharp({ create: { width: 832, height: 1216, channels: 3, background: '#6d28d9' } })
  .webp()
  .toBuffer();
const provider: PortraitProvider = {
  name: 'bench',
  create(_job: PortraitJob) {
    return Promise.resolve({ bytes: webp, mimeType: 'image/webp', width: 832, height: 1216, engine: 'offline' });
  },
};

let peakRss = process.memoryUsage.rss();
setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 20).unref();

await startBenchApp({ STARTER_TOKENS: '1000000' }, { providers: { portraits: provider } });

serveParent(async (request) => {
  if (request.type === 'ready') return null;
  if (request.type === 'memory') {
    const value = { rss: process.memoryUsage.rss(), peakRss };
    peakRss = process.memoryUsage.rss();
    return value;
  }
  throw new Error(`unknown request ${request.type}`);
});
