import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { IMAGE_MODELS } from '../src/domain/images';
import { OFFLINE_CHAT_MODEL_ID } from '../server/providers/chat/offline';
import { AdminService } from '../server/admin/service';
import { openDatabase } from '../server/db/client';
import { LedgerService } from '../server/ledger/service';
import { signInThroughIdp, type CookieJar } from '../tests/server/helpers';
import { createPostgresDatabase, startInstance, type Instance } from '../tests/support/instances';
import { startS3Server } from '../tests/support/s3-server';

/**
 * The same mixed load (1 generation to 3 chat replies, 20 users, 8 at a time per user)
 * against one instance and against two behind a round-robin client, each set-up on its
 * own fresh PostgreSQL database, Redis and S3 server, as in production: every instance is
 * its own process. Reports throughput, p50 and p99 latency, and the ledger check (every
 * user's ledger sums to the balance). Needs TEST_DATABASE_URL (a PostgreSQL server) and
 * Redis at 127.0.0.1:6379. Target: no errors and the ledger check passes; the figures are
 * reported, since on a machine of 2 cores two instances share the same CPUs.
 */
const USERS = 20;
const REQUESTS = 600;
const CONCURRENCY = 40;
const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function runLoad(instanceCount: 1 | 2): Promise<string> {
  const database = await createPostgresDatabase(adminUrl);
  const s3 = await startS3Server('bench');
  const prefix = `bench-${randomBytes(6).toString('hex')}:`;
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: prefix,
    ...s3.env,
    COOKIE_SECRET: randomBytes(32).toString('base64url'),
    RATE_LIMIT_PER_MINUTE: '1000000',
    STARTER_TOKENS: '100000',
    CHAT_OFFLINE_TOKEN_DELAY_MS: '0',
    LOG_LEVEL: 'info',
  };
  const instances: Instance[] = await Promise.all(
    Array.from({ length: instanceCount }, (_, i) => startInstance(`bench-${i}`, env)),
  );
  try {
    const users: { jar: CookieJar; conversationId: number }[] = [];
    for (let i = 0; i < USERS; i += 1) {
      const on = instances[i % instanceCount]!;
      const { jar } = await signInThroughIdp(on, `bench-${i}@example.com`);
      const created = await fetch(`${on.url}/llm/conversations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: jar.header(), origin: on.url },
        body: JSON.stringify({ title: 'Bench' }),
      });
      users.push({ jar, conversationId: ((await created.json()) as { data: { id: number } }).data.id });
    }
    const latencies: number[] = [];
    let errors = 0;
    let next = 0;
    const one = async (n: number) => {
      const instance = instances[n % instanceCount]!;
      const user = users[n % USERS]!;
      const generation = n % 4 === 0;
      const path = generation ? IMAGE_MODELS.core.endpoint : `/llm/conversations/${user.conversationId}/stream`;
      const body = generation
        ? { prompt: 'bench', aspect_ratio: '1:1' }
        : { message: 'Hello', model: OFFLINE_CHAT_MODEL_ID, maxTokens: 40, contextTokensLimit: 500 };
      const start = performance.now();
      const response = await fetch(`${instance.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: user.jar.header(), origin: instance.url },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      latencies.push(performance.now() - start);
      if (!response.ok || (!generation && !text.includes('"isComplete":true'))) errors += 1;
    };
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) await one(next++);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const db = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 2 });
    const { checked, violations } = await new AdminService(db.db, new LedgerService(db.db)).verify();
    await db.close();
    const line =
      `${instanceCount} instance${instanceCount > 1 ? 's' : ' '}: ${REQUESTS} requests in ${seconds.toFixed(1)} s = ` +
      `${(REQUESTS / seconds).toFixed(0)} req/s, p50 ${pct(latencies, 50).toFixed(0)} ms, p99 ${pct(latencies, 99).toFixed(0)} ms, ` +
      `${errors} errors; ledger check: ${checked} users, ${violations.length} mismatches`;
    if (errors > 0 || violations.length > 0) throw new Error(line);
    return line;
  } finally {
    await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
    await s3.stop();
    await database.drop();
    const redis = new Redis('redis://127.0.0.1:6379');
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
}

export default async function scaleBench(): Promise<void> {
  console.log(
    `Mixed load: ${REQUESTS} requests (1 core generation : 3 chat replies), ${USERS} users, ${CONCURRENCY} at a time`,
  );
  console.log(await runLoad(1));
  console.log(await runLoad(2));
}
