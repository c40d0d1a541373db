import { performance } from 'node:perf_hooks';
import { freePort, signInThroughIdp } from '../tests/server/helpers';
import type { ImagePage } from '../src/domain/image-record';
import { startChild } from './support/child';

/**
 * The gallery at scale: a user with 100,000 images among 1,000,000 rows, on PGlite on disk
 * in the app's own process as `npm start` runs it, then on PostgreSQL when TEST_DATABASE_URL
 * is set. Each case is timed through the app and
 * bare (the same repository queries, in the app process, on the same database),
 * interleaved. "Through the app" is the app's own time for the request, which it reports
 * in its Server-Timing header: from the request's first byte read to the answer ready to
 * write (routing, hooks, session, validation, the queries, the JSON, compression). The
 * client's round trip is printed beside it; on this virtual machine it also holds the
 * wake-up of two idle processes and the client's own decoding, which no code of ours
 * takes part in (the bench prints that floor, measured on /healthz). Targets: the app
 * within 2x of bare and the round trip under 25 ms, at p50. Then a page of 48 real cards
 * (offline renders) must transfer at most 1.5 MB of thumbnails.
 */
const TOTAL_ROWS = 1_000_000;
const OWN_ROWS = 100_000;
const ROUNDS = 30;
const WARMUP = 5;
const TARGET_RATIO = 2;
const TARGET_P50_MS = 25;
const CARDS = 48;
const TARGET_PAGE_BYTES = 1.5 * 1024 * 1024;

const p50 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

export default async function galleryBench(): Promise<void> {
  const postgres = process.env.TEST_DATABASE_URL;
  const problems = await galleryOn('pglite', {});
  if (postgres) problems.push(...(await galleryOn('postgres', { BENCH_POSTGRES_URL: postgres })));
  if (problems.length > 0) throw new Error(problems.join('; '));
}

async function galleryOn(database: string, env: Record<string, string>): Promise<string[]> {
  console.log(`--- ${database}`);
  const port = await freePort();
  const app = await startChild('gallery-server-process.ts', { PORT: String(port), ...env }, { discardStdout: true });
  const url = `http://localhost:${port}`;
  const problems: string[] = [];
  try {
    const { jar } = await signInThroughIdp({ url }, 'gallery-bench@example.com');
    /** The reply, the client's round trip and the app's own time (its Server-Timing). */
    const timed = async (path: string, headers: Record<string, string> = { cookie: jar.header() }) => {
      const start = performance.now();
      const response = await fetch(`${url}${path}`, { headers });
      const body = (await response.json()) as { data: ImagePage };
      const roundTripMs = performance.now() - start;
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      const appMs = Number(/app;dur=([\d.]+)/.exec(response.headers.get('server-timing') ?? '')?.[1]);
      if (!Number.isFinite(appMs)) throw new Error(`${path} has no Server-Timing`);
      return { body, roundTripMs, appMs };
    };
    const me = (await (await fetch(`${url}/auth/me`, { headers: { cookie: jar.header() } })).json()) as {
      data: { id: number };
    };
    const seeded = await app.ask<{ ms: number }>('seed', { userId: me.data.id, total: TOTAL_ROWS, own: OWN_ROWS });
    console.log(
      `seeded ${TOTAL_ROWS.toLocaleString('en')} rows (${OWN_ROWS.toLocaleString('en')} of the user's) in ${(seeded.ms / 1000).toFixed(1)} s`,
    );
    // The fixed cost of any signed-in request (HTTP, session, hooks), and the round trip of
    // the cheapest answer (/healthz) back to back and after the processes idle for 3 ms.
    const floor = { app: [] as number[], roundTrip: [] as number[], busy: [] as number[], idle: [] as number[] };
    for (let i = 0; i < WARMUP + ROUNDS; i += 1) {
      const me = await timed('/auth/me');
      let start = performance.now();
      await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
      const busy = performance.now() - start;
      await new Promise((resolve) => setTimeout(resolve, 3));
      start = performance.now();
      await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
      if (i >= WARMUP) {
        floor.app.push(me.appMs);
        floor.roundTrip.push(me.roundTripMs);
        floor.busy.push(busy);
        floor.idle.push(performance.now() - start);
      }
    }
    console.log(
      `GET /auth/me (any signed-in request's fixed cost): app p50 ${p50(floor.app).toFixed(2)} ms, round trip ${p50(floor.roundTrip).toFixed(1)} ms; ` +
        `GET /healthz round trip ${p50(floor.busy).toFixed(1)} ms back to back, ${p50(floor.idle).toFixed(1)} ms after 3 ms idle`,
    );
    const lastPage = Math.ceil(OWN_ROWS / 48);
    const cases = [
      { name: 'first page, limit 48', page: 1, limit: 48 },
      { name: `last page (${lastPage}), limit 48`, page: lastPage, limit: 48 },
      // 5-character search matching 1 in ~1000 of the user's prompts ("variation 12345").
      { name: 'q search "n 12345", limit 48', page: 1, limit: 48, q: 'n 12345' },
      // A word in a tenth of the prompts: reported, not held to the target (see docs/benchmarks.md).
      {
        name: 'q search "dragon", limit 48 (a tenth of the rows match)',
        page: 1,
        limit: 48,
        q: 'dragon',
        report: true,
      },
    ];
    for (const c of cases) {
      const query = `?page=${c.page}&limit=${c.limit}${c.q ? `&q=${encodeURIComponent(c.q)}` : ''}`;
      const first = (await timed(`/api/images/my-images${query}`)).body;
      const bare: number[] = [];
      const ours: number[] = [];
      const roundTrips: number[] = [];
      for (let i = 0; i < WARMUP + ROUNDS; i += 1) {
        const bareMs = await app.ask<number>('bare', { userId: me.data.id, page: c.page, limit: c.limit, q: c.q });
        const { appMs, roundTripMs } = await timed(`/api/images/my-images${query}`);
        if (i >= WARMUP) {
          bare.push(bareMs);
          ours.push(appMs);
          roundTrips.push(roundTripMs);
        }
      }
      const ratio = p50(ours) / p50(bare);
      console.log(
        `${c.name}: ${first.data.images.length} images of ${first.data.pagination.total}; app p50 ${p50(ours).toFixed(2)} ms, bare p50 ${p50(bare).toFixed(2)} ms, ratio ${ratio.toFixed(2)}; round trip p50 ${p50(roundTrips).toFixed(1)} ms`,
      );
      const name = `${database}, ${c.name}`;
      if (ratio > TARGET_RATIO) problems.push(`${name}: ${ratio.toFixed(2)}x the bare query`);
      if (!c.report && p50(roundTrips) > TARGET_P50_MS)
        problems.push(`${name}: round trip p50 ${p50(roundTrips).toFixed(1)} ms`);
    }

    // A page of 48 real cards: another user generates 48 images with the offline engine.
    const artist = await signInThroughIdp({ url }, 'gallery-bench-artist@example.com');
    const ratios = ['1:1', '16:9', '2:3', '3:2', '4:5', '21:9'];
    for (let i = 0; i < CARDS; i += 1) {
      const response = await fetch(`${url}/api/stability-core/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: url, cookie: artist.jar.header() },
        body: JSON.stringify({ prompt: `bench card ${i}`, aspect_ratio: ratios[i % ratios.length], seed: i }),
      });
      if (response.status !== 200) throw new Error(`generation ${i} answered ${response.status}`);
    }
    // Thumbnails are made just after each answer: the page as the gallery shows it a moment
    // later, when the last one is linked (a picture without one would stand in for it).
    const listPage = async () =>
      (await (
        await fetch(`${url}/api/images/my-images?limit=${CARDS}`, { headers: { cookie: artist.jar.header() } })
      ).json()) as { data: ImagePage };
    let pageReply = await listPage();
    for (
      let wait = 0;
      wait < 50 && pageReply.data.images.some((image) => !image.thumbnailUrl.endsWith('.webp'));
      wait++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      pageReply = await listPage();
    }
    let thumbBytes = 0;
    let fullBytes = 0;
    for (const image of pageReply.data.images) {
      thumbBytes += (await (await fetch(image.thumbnailUrl)).arrayBuffer()).byteLength;
      fullBytes += image.fileSize;
    }
    console.log(
      `a page of ${pageReply.data.images.length} cards: thumbnails ${(thumbBytes / 1024 / 1024).toFixed(2)} MB (full images would be ${(fullBytes / 1024 / 1024).toFixed(2)} MB); target <= 1.5 MB`,
    );
    if (thumbBytes > TARGET_PAGE_BYTES) problems.push(`${database}: a page of 48 cards is ${thumbBytes} bytes`);
  } finally {
    await app.stop();
  }
  return problems;
}
