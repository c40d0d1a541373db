import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { freePort, signInThroughIdp } from '../tests/server/helpers';
import { startChild } from './support/child';
import { BENCH_IMAGE_SIZE, benchPixels, encodeBenchImage } from './support/image';

/**
 * The server's own cost of one generation (validation, ledger, request rows, file,
 * response) through the real app on embedded PGlite on disk, next to the bare cost of the
 * one thing a provider must do anyway: encode a 1024x1024 image with sharp. The app runs
 * in its own process with a provider that does exactly that encode, so ours - bare is our
 * overhead; the bare encode runs here, between the requests.
 * Targets: ours p50 <= 1.25 x bare p50; 20 simultaneous generations all succeed.
 */
const ROUNDS = 40;
const WARMUP = 5;
const TARGET_RATIO = 1.25;
const CONCURRENT = 20;

const p50 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

export default async function generationBench(): Promise<void> {
  const pixels = await benchPixels(sharp);
  const encode = () => encodeBenchImage(sharp, pixels);
  const port = await freePort();
  // Its request logs are written as in production, then dropped.
  const app = await startChild('generation-server-process.ts', { PORT: String(port) }, { discardStdout: true });
  const url = `http://localhost:${port}`;
  try {
    const { jar } = await signInThroughIdp({ url }, 'bench@example.com');
    const generate = (i: number) =>
      fetch(`${url}/api/stability/text-to-image`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: url, cookie: jar.header() },
        body: JSON.stringify({
          prompt: `benchmark image ${i}`,
          width: BENCH_IMAGE_SIZE,
          height: BENCH_IMAGE_SIZE,
          seed: i,
        }),
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

    console.log(
      `bare sharp PNG encode ${BENCH_IMAGE_SIZE}x${BENCH_IMAGE_SIZE}: p50 ${bareP50.toFixed(1)} ms (${ROUNDS} rounds)`,
    );
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
    await app.stop();
  }
}
