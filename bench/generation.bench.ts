import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import type { ImageJob, ImageProvider } from '../server/providers/images/types';
import { signInThroughIdp, startTestApp } from '../tests/server/helpers';

/**
 * The server's own cost of one generation (validation, ledger, request rows, file,
 * response) through the real app on embedded PGlite, next to the bare cost of the one
 * thing a provider must do anyway: encode a 1024x1024 image with sharp. The fake
 * provider does exactly that encode, so ours - bare is our overhead.
 * Targets: ours p50 <= 1.25 x bare p50; 20 simultaneous generations all succeed.
 */
const SIZE = 1024;
const ROUNDS = 40;
const WARMUP = 5;
const TARGET_RATIO = 1.25;
const CONCURRENT = 20;

const p50 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

export default async function generationBench(): Promise<void> {
  const pixels = await sharp({
    create: {
      width: SIZE,
      height: SIZE,
      channels: 3,
      background: '#6d28d9',
      noise: { type: 'gaussian', mean: 120, sigma: 40 },
    },
  })
    .raw()
    .toBuffer();
  const encode = () =>
    sharp(pixels, { raw: { width: SIZE, height: SIZE, channels: 3 } })
      .png()
      .toBuffer();

  const provider: ImageProvider = {
    name: 'bench',
    async generate(job: ImageJob) {
      const bytes = await encode();
      return {
        bytes,
        mimeType: 'image/png',
        width: SIZE,
        height: SIZE,
        seed: job.seed ?? 1,
        finishReason: 'SUCCESS',
        engine: 'offline',
      };
    },
  };
  const { openDatabase } = await import('../server/db/client');
  const app = await startTestApp(
    { name: 'pglite', open: () => openDatabase({ kind: 'pglite' }) },
    { STARTER_TOKENS: '1000000' },
    {},
    { providers: { images: provider } },
  );
  try {
    const { jar } = await signInThroughIdp(app, 'bench@example.com');
    const generate = (i: number) =>
      fetch(`${app.url}/api/stability/text-to-image`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: app.url, cookie: jar.header() },
        body: JSON.stringify({ prompt: `benchmark image ${i}`, width: SIZE, height: SIZE, seed: i }),
      }).then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      });

    const bare: number[] = [];
    const ours: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i += 1) {
      // Interleaved, so both see the same machine state.
      let start = performance.now();
      await encode();
      const bareMs = performance.now() - start;
      start = performance.now();
      const status = await generate(i);
      const oursMs = performance.now() - start;
      if (status !== 200) throw new Error(`generation ${i} answered ${status}`);
      if (i >= WARMUP) {
        bare.push(bareMs);
        ours.push(oursMs);
      }
    }
    const bareP50 = p50(bare);
    const oursP50 = p50(ours);
    const ratio = oursP50 / bareP50;

    const start = performance.now();
    const statuses = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => generate(10_000 + i)));
    const concurrentMs = performance.now() - start;
    const failed = statuses.filter((s) => s !== 200).length;

    console.log(`bare sharp PNG encode ${SIZE}x${SIZE}: p50 ${bareP50.toFixed(1)} ms (${ROUNDS} rounds)`);
    console.log(`full generation request (same encode inside): p50 ${oursP50.toFixed(1)} ms`);
    console.log(
      `our overhead: ${(oursP50 - bareP50).toFixed(1)} ms p50, ratio ${ratio.toFixed(3)} (target <= ${TARGET_RATIO})`,
    );
    console.log(
      `${CONCURRENT} simultaneous generations: ${CONCURRENT - failed} ok, ${failed} failed, ${concurrentMs.toFixed(0)} ms`,
    );
    if (ratio > TARGET_RATIO) throw new Error(`overhead ratio ${ratio.toFixed(3)} exceeds ${TARGET_RATIO}`);
    if (failed > 0) throw new Error(`${failed} of ${CONCURRENT} simultaneous generations failed`);
  } finally {
    await app.close();
  }
}
