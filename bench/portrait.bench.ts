import http from 'node:http';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { freePort, signInThroughIdp } from '../tests/server/helpers';
import { DECODED_MAX_EDGE } from '../server/uploads/image-upload';
import { startChild } from './support/child';

/**
 * The server's own cost of one portrait with an instant provider (multipart parsing, the
 * checks, the photo's decode and re-encode, ledger, storage, the response), through the
 * real app in a process of its own, next to the bare sharp decode and re-encode of the
 * same photo in this process, interleaved. The server's own cost is what the app reports
 * in its Server-Timing header: from the request's first byte read (the upload arriving
 * and parsed included) to the answer ready to write. The client's round trip, which adds
 * this process encoding the 4 MB form and the loopback transfer, is printed beside it.
 * Then 10 simultaneous uploads of an 8 MB photo, with the app's peak resident memory.
 * Targets: ours p50 <= 1.3x the bare work p50; 10/10 succeed; the app stays under 400 MB.
 */
const ROUNDS = 61;
const WARMUP = 3;
const TARGET_RATIO = 1.3;
const CONCURRENT = 10;
const MEMORY_LIMIT_MB = 400;

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

/** A 12 MP photo of noise: about the size of a phone picture, and hard to compress. */
async function benchPhoto(sigma: number, quality: number): Promise<Buffer> {
  return sharp({
    create: {
      width: 4000,
      height: 3000,
      channels: 3,
      background: '#b07a5e',
      noise: { type: 'gaussian', mean: 128, sigma },
    },
  })
    .jpeg({ quality })
    .toBuffer();
}

/**
 * A multipart/form-data body encoded up front, as a browser's native code sends it in one
 * go: undici's FormData streams a 4 MB Blob out in small JavaScript steps, and the server
 * would wait on this process (its clock runs from the first byte).
 */
function multipartForm(
  fields: Record<string, string>,
  file: { name: string; fileName: string; type: string; bytes: Buffer },
): { body: Buffer; contentType: string } {
  const boundary = `----bench${Math.random().toString(16).slice(2)}`;
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  const fileHead =
    `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.fileName}"\r\n` +
    `Content-Type: ${file.type}\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(parts.join('') + fileHead), file.bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

/**
 * POSTs `body` in one write, as a browser's network stack sends an upload: the kernel and
 * libuv push it as fast as the server reads, with no JavaScript per chunk in this process
 * (undici's fetch writes a body in steps of its own, and the server's clock, which runs
 * from the first byte, would wait on them).
 */
function post(
  target: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      target,
      { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } },
      (response) => {
        response.resume();
        response.once('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
        response.once('error', reject);
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

export default async function portraitBench(): Promise<void> {
  const photo = await benchPhoto(30, 80);
  const big = await benchPhoto(60, 88);
  const bare = () =>
    sharp(photo, { failOn: 'truncated', sequentialRead: true })
      .rotate()
      .resize({ width: DECODED_MAX_EDGE, height: DECODED_MAX_EDGE, fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: 90 })
      .toBuffer();
  const port = await freePort();
  const app = await startChild('portrait-server-process.ts', { PORT: String(port) }, { discardStdout: true });
  const url = `http://localhost:${port}`;
  try {
    const { jar } = await signInThroughIdp({ url }, 'bench@example.com');
    const create = async (bytes: Buffer, i: number) => {
      const form = multipartForm(
        { prompt: `benchmark portrait ${i}`, aspect_ratio: '2:3', output_format: 'webp' },
        { name: 'user_image_file', fileName: 'photo.jpg', type: 'image/jpeg', bytes },
      );
      const response = await post(`${url}/api/face-swap/generate`, form.body, {
        origin: url,
        cookie: jar.header(),
        'content-type': form.contentType,
      });
      const appMs = Number(/app;dur=([\d.]+)/.exec(String(response.headers['server-timing']))?.[1]);
      return { status: response.status, appMs };
    };

    const atStart = await app.ask<{ rss: number; peakRss: number }>('memory');
    console.log(`app at start: ${(atStart.rss / 1024 / 1024).toFixed(0)} MB resident`);
    const bareMs: number[] = [];
    const oursMs: number[] = [];
    const roundTripMs: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i += 1) {
      let start = performance.now();
      await bare();
      const b = performance.now() - start;
      start = performance.now();
      const { status, appMs } = await create(photo, i);
      const roundTrip = performance.now() - start;
      if (status !== 200) throw new Error(`portrait ${i} answered ${status}`);
      if (!Number.isFinite(appMs)) throw new Error('the portrait answer has no Server-Timing');
      if (i >= WARMUP) {
        bareMs.push(b);
        oursMs.push(appMs);
        roundTripMs.push(roundTrip);
      }
    }
    const ratio = p50(oursMs) / p50(bareMs);

    const before = await app.ask<{ rss: number; peakRss: number }>('memory');
    const start = performance.now();
    const statuses = (await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => create(big, 1000 + i)))).map(
      (reply) => reply.status,
    );
    const concurrentMs = performance.now() - start;
    const memory = await app.ask<{ rss: number; peakRss: number }>('memory');
    const failed = statuses.filter((s) => s !== 200).length;
    const peakMb = memory.peakRss / 1024 / 1024;

    console.log(
      `photo 4000x3000 JPEG ${(photo.length / 1024 / 1024).toFixed(2)} MB: bare sharp decode + re-encode p50 ${p50(bareMs).toFixed(0)} ms (${ROUNDS} rounds)`,
    );
    console.log(
      `portrait request with an instant provider: the server's own p50 ${p50(oursMs).toFixed(0)} ms (round trip ${p50(roundTripMs).toFixed(0)} ms)`,
    );
    console.log(`ours / bare at p50: ${ratio.toFixed(2)}x (target <= ${TARGET_RATIO}x)`);
    console.log(
      `${CONCURRENT} simultaneous ${(big.length / 1024 / 1024).toFixed(2)} MB uploads: ${CONCURRENT - failed} ok, ${failed} failed, ${concurrentMs.toFixed(0)} ms; app peak RSS ${peakMb.toFixed(0)} MB (limit ${MEMORY_LIMIT_MB} MB; ${(before.rss / 1024 / 1024).toFixed(0)} MB before)`,
    );
    if (ratio > TARGET_RATIO) throw new Error(`ours is ${ratio.toFixed(2)}x the bare work, over ${TARGET_RATIO}x`);
    if (failed > 0) throw new Error(`${failed} of ${CONCURRENT} simultaneous uploads failed: ${statuses.join(',')}`);
    if (peakMb > MEMORY_LIMIT_MB) throw new Error(`the app peaked at ${peakMb.toFixed(0)} MB`);
  } finally {
    await app.stop();
  }
}
