import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../server/app';
import { parseConfig } from '../server/config';
import { openDatabase } from '../server/db/client';
import { createSseLineParser } from '../src/domain/sse';
import { freePort, signInThroughIdp } from '../tests/server/helpers';
import { startFakeOpenAi } from '../tests/server/providers/chat/fake-openai';

/**
 * Chat streaming cost of our server: time to first content byte and total time through
 * /llm/conversations/{id}/stream versus straight from the (fake) provider, in the same
 * run; then 500 simultaneous streams on one instance.
 * Targets: p50 overhead <= 5 ms (first byte and total); 500 streams, no errors.
 */
const SAMPLES = 200;
const CONCURRENT = 500;
const OVERHEAD_TARGET_MS = 5;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function timed(url: string, init: RequestInit): Promise<{ ttfb: number; total: number; ok: boolean }> {
  const start = performance.now();
  const response = await fetch(url, init);
  const reader = response.body!.getReader();
  const parser = createSseLineParser();
  let ttfb = NaN;
  let sawContent = false;
  let done = false;
  let failed = !response.ok;
  while (!done) {
    const { value, done: end } = await reader.read();
    if (end) break;
    for (const event of parser.push(value)) {
      if (event.type === 'done') done = true;
      else {
        const v = event.value as {
          content?: string;
          choices?: Array<{ delta?: { content?: string } }>;
          error?: unknown;
        };
        if (v.error !== undefined) failed = true;
        const content = v.content ?? v.choices?.[0]?.delta?.content;
        if (!sawContent && content) {
          sawContent = true;
          ttfb = performance.now() - start;
        }
      }
    }
  }
  return { ttfb, total: performance.now() - start, ok: !failed && sawContent };
}

export default async function chatBench(): Promise<void> {
  const fake = await startFakeOpenAi({
    reply: 'The quick brown fox jumps over the lazy dog. '.repeat(4),
    chunkSize: 8,
  });
  const port = await freePort();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'chat-bench-'));
  const config = parseConfig(
    {
      NODE_ENV: 'production',
      PORT: String(port),
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '1000000',
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_MAX_RETRIES: '0',
      CHAT_RECONCILE_INTERVAL_MS: '0',
    },
    { webDir: undefined },
  );
  const database = await openDatabase({ kind: 'pglite' });
  const app = await buildApp({ config, database, cookieSecret: randomBytes(32).toString('base64url') });
  await app.server.listen({ port, host: '127.0.0.1' });
  const base = `http://localhost:${port}`;
  try {
    const { jar } = await signInThroughIdp({ url: base }, 'bench@example.com');
    const me = (await (await fetch(`${base}/auth/me`, { headers: { cookie: jar.header() } })).json()) as {
      data: { id: number };
    };
    await app.services.ledger.credit({
      userId: me.data.id,
      amount: 10_000_000,
      reason: 'purchase',
      idempotencyKey: 'bench',
    });
    const headers = { 'content-type': 'application/json', origin: base, cookie: jar.header() };
    const created = (await (
      await fetch(`${base}/llm/conversations`, { method: 'POST', headers, body: JSON.stringify({ title: 'bench' }) })
    ).json()) as { data: { id: number } };
    const conversationId = created.data.id;
    // A short context keeps the prompt the same size for every sample.
    const ours = () =>
      timed(`${base}/llm/conversations/${conversationId}/stream`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: 'Hello there', model: 'gpt-4o', maxTokens: 200, contextTokensLimit: 100 }),
      });
    const direct = () =>
      timed(`${fake.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
        body: JSON.stringify({
          model: 'gpt-4o',
          stream: true,
          stream_options: { include_usage: true },
          max_tokens: 200,
          messages: [{ role: 'user', content: 'Hello there' }],
        }),
      });

    for (let i = 0; i < 20; i++) {
      await ours();
      await direct();
    }
    const o: Array<{ ttfb: number; total: number }> = [];
    const d: Array<{ ttfb: number; total: number }> = [];
    for (let i = 0; i < SAMPLES; i++) {
      // Interleaved so both see the same machine conditions.
      d.push(await direct());
      o.push(await ours());
    }
    const row = (name: string, xs: number[]) =>
      console.log(`${name.padEnd(28)} p50 ${pct(xs, 50).toFixed(2)} ms   p95 ${pct(xs, 95).toFixed(2)} ms`);
    row(
      'direct: first content',
      d.map((x) => x.ttfb),
    );
    row(
      'ours:   first content',
      o.map((x) => x.ttfb),
    );
    row(
      'direct: total',
      d.map((x) => x.total),
    );
    row(
      'ours:   total',
      o.map((x) => x.total),
    );
    const ttfbOverhead =
      pct(
        o.map((x) => x.ttfb),
        50,
      ) -
      pct(
        d.map((x) => x.ttfb),
        50,
      );
    const totalOverhead =
      pct(
        o.map((x) => x.total),
        50,
      ) -
      pct(
        d.map((x) => x.total),
        50,
      );
    console.log(
      `overhead p50: first content ${ttfbOverhead.toFixed(2)} ms, total ${totalOverhead.toFixed(2)} ms (target <= ${OVERHEAD_TARGET_MS} ms)`,
    );

    // 500 at once: each stream stays open ~1 s so they all overlap.
    fake.setBehaviour({ reply: 'x'.repeat(200), chunkSize: 10, chunkDelayMs: 50 });
    global.gc?.();
    const before = process.memoryUsage();
    let peak = before.rss;
    let peakHeap = before.heapUsed;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 20);
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: CONCURRENT }, () => ours()));
    const wall = performance.now() - started;
    clearInterval(sampler);
    const errors = results.filter((r) => !r.ok).length;
    console.log(
      `${CONCURRENT} simultaneous streams: ${errors} errors, wall ${wall.toFixed(0)} ms, total p50 ${pct(
        results.map((r) => r.total),
        50,
      ).toFixed(0)} ms, p95 ${pct(
        results.map((r) => r.total),
        95,
      ).toFixed(0)} ms`,
    );
    console.log(
      `memory per stream (server and client in one process): rss ${((peak - before.rss) / CONCURRENT / 1024).toFixed(1)} KiB, heap ${(
        (peakHeap - before.heapUsed) /
        CONCURRENT /
        1024
      ).toFixed(1)} KiB`,
    );
    const problems: string[] = [];
    if (ttfbOverhead > OVERHEAD_TARGET_MS)
      problems.push(`first-content overhead ${ttfbOverhead.toFixed(2)} ms > ${OVERHEAD_TARGET_MS} ms`);
    if (totalOverhead > OVERHEAD_TARGET_MS)
      problems.push(`total overhead ${totalOverhead.toFixed(2)} ms > ${OVERHEAD_TARGET_MS} ms`);
    if (errors > 0) problems.push(`${errors} of ${CONCURRENT} simultaneous streams failed`);
    if (problems.length) throw new Error(problems.join('; '));
  } finally {
    await app.server.close();
    await database.close();
    await fake.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
