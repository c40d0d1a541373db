import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { freePort, signInThroughIdp } from '../tests/server/helpers';
import { startChild } from './support/child';
import { BENCH_IMAGE_SIZE, benchPixels, encodeBenchImage } from './support/image';

/**
 * The server's own cost of one generation (validation, ledger, request rows, file,
 * response) through the real app, next to the bare cost of the one thing a provider must
 * do anyway: encode a 1024x1024 image with sharp. The app runs in a process of its own
 * with an instant provider that hands back that image, already encoded, so a request's
 * time is our cost alone; the bare encode runs here, interleaved with the requests.
 * Targets: our cost p50 <= 25% of the bare encode p50; 20 simultaneous generations all
 * succeed.
 */
const ROUNDS = 40;
const WARMUP = 5;
const TARGET_SHARE = 0.25;
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
    const share = oursP50 / bareP50;

    const start = performance.now();
    const statuses = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => generate(10_000 + i)));
    const concurrentMs = performance.now() - start;
    const failed = statuses.filter((s) => s !== 200).length;

    console.log(
      `bare sharp PNG encode ${BENCH_IMAGE_SIZE}x${BENCH_IMAGE_SIZE}: p50 ${bareP50.toFixed(1)} ms (${ROUNDS} rounds)`,
    );
    console.log(`generation request with an instant provider (our cost): p50 ${oursP50.toFixed(1)} ms`);
    console.log(
      `our cost is ${(share * 100).toFixed(1)}% of the bare encode at p50 (target <= ${TARGET_SHARE * 100}%): a provider that encodes would take ${(bareP50 + oursP50).toFixed(1)} ms through us`,
    );
    console.log(
      `${CONCURRENT} simultaneous generations: ${CONCURRENT - failed} ok, ${failed} failed, ${concurrentMs.toFixed(0)} ms`,
    );
    if (share > TARGET_SHARE) {
      throw new Error(`our cost is ${(share * 100).toFixed(1)}% of the bare encode, over ${TARGET_SHARE * 100}%`);
    }
    if (failed > 0) throw new Error(`${failed} of ${CONCURRENT} simultaneous generations failed`);
  } finally {
    await app.stop();
  }
}
