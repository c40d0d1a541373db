import { startBenchApp } from './app';
import { serveParent } from './parent';

/**
 * The app as `npm start` runs it, talking to the OpenAI-compatible service at
 * OPENAI_BASE_URL. The parent can top a user up and ask for this process's peak memory
 * over a stretch of time.
 */
const app = await startBenchApp({
  OPENAI_API_KEY: 'sk-bench',
  OPENAI_BASE_URL: process.env.OPENAI_BASE_URL ?? '',
  OPENAI_MAX_RETRIES: '0',
  CHAT_RECONCILE_INTERVAL_MS: '0',
});

let sampler: ReturnType<typeof setInterval> | undefined;
let baseline = process.memoryUsage();
let peak = { rss: 0, heapUsed: 0 };

serveParent(async (request) => {
  switch (request.type) {
    case 'ready':
      return null;
    case 'credit':
      return app.services.ledger.credit({
        userId: request.userId as number,
        amount: request.amount as number,
        reason: 'purchase',
        idempotencyKey: `bench:${request.userId as number}:${Date.now()}`,
      });
    case 'memory:start':
      global.gc?.();
      baseline = process.memoryUsage();
      peak = { rss: baseline.rss, heapUsed: baseline.heapUsed };
      sampler = setInterval(() => {
        const now = process.memoryUsage();
        peak = { rss: Math.max(peak.rss, now.rss), heapUsed: Math.max(peak.heapUsed, now.heapUsed) };
      }, 20);
      return null;
    case 'memory:stop':
      clearInterval(sampler);
      return { rss: peak.rss - baseline.rss, heapUsed: peak.heapUsed - baseline.heapUsed };
    default:
      throw new Error(`unknown request ${request.type}`);
  }
});
