import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MODELS } from '../../src/domain/images';
import { AdminService } from '../../server/admin/service';
import { AuthService } from '../../server/auth/service';
import { ConfigError, parseConfig } from '../../server/config';
import { openDatabase } from '../../server/db/client';
import { generationRequests, users } from '../../server/db/schema';
import { LedgerService } from '../../server/ledger/service';
import { bundle, type Bundle } from '../support/bundles';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { freePort, locationOf, pglite, signInThroughIdp, startTestApp, testDatabases, type TestApp } from './helpers';
import { balance, expectLedgerConsistent, getJson, postJson, signedInUser } from './images/support';

const run = promisify(execFile);
const coreBody = { prompt: 'a lighthouse at dusk', aspect_ratio: '1:1' };
const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';

describe('images in an S3 bucket, readiness and metrics', () => {
  let s3: S3TestServer;
  let app: TestApp;
  let downApp: TestApp;

  beforeAll(async () => {
    s3 = await startS3Server('app-images');
    app = await startTestApp(pglite, { ...s3.env, METRICS_TOKEN });
    // The same set-up with the store gone: nothing listens on its port.
    const gone = { ...s3.env, S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`, S3_TIMEOUT_MS: '2000' };
    downApp = await startTestApp(pglite, gone);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await downApp?.close();
    await s3?.stop();
  });

  it("stores a generation in the bucket and serves it at SPEC's address with the caching headers", async () => {
    const user = await signedInUser(app, 's3-user@example.com');
    const { status, body } = await postJson(app, user, IMAGE_MODELS.core.endpoint, coreBody);
    expect(status).toBe(200);
    const data = body.data as { fileName: string; imageUrl: string; fileSize: number };
    expect(data.imageUrl).toBe(`${app.url}/images/${data.fileName}`);
    expect(app.storage.kind).toBe('s3');
    const stored = await app.storage.open(data.fileName);
    expect(stored?.size).toBe(data.fileSize);
    stored?.body.destroy();
    // No file on the local disk.
    await expect(fs.readdir(app.config.imagesDir)).rejects.toThrow();

    const served = await fetch(data.imageUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    const bytes = Buffer.from(await served.arrayBuffer());
    expect(bytes.length).toBe(data.fileSize);
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');

    expect((await fetch(`${app.url}/images/${'a'.repeat(32)}.png`)).status).toBe(404);
    expect((await fetch(`${app.url}/images/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
    expect((await fetch(`${app.url}/images/${'a'.repeat(32)}.gif`)).status).toBe(404);
    await expectLedgerConsistent(app, user);
  });

  it('refunds a generation the store refuses, with a clear error, and reports not ready', async () => {
    const user = await signedInUser(downApp, 'store-down@example.com');
    const before = await balance(downApp, user);
    const { status, body } = await postJson(downApp, user, IMAGE_MODELS.core.endpoint, coreBody);
    expect(status).toBe(503);
    expect(body).toMatchObject({
      success: false,
      code: 'STORAGE_UNAVAILABLE',
      message: 'The image could not be saved, and your tokens were refunded',
    });
    expect(await balance(downApp, user)).toBe(before);
    const rows = await downApp.database.db
      .select()
      .from(generationRequests)
      .where(eq(generationRequests.userId, user.id));
    expect(rows.map((r) => r.status)).toEqual(['FAILED']);
    await expectLedgerConsistent(downApp, user);

    const ready = await fetch(`${downApp.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'unavailable', checks: { database: 'ok', storage: 'unavailable' } });
    expect((await fetch(`${downApp.url}/healthz`)).status).toBe(200);
  });

  it('is ready with the database and the bucket', async () => {
    const ready = await fetch(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { database: 'ok', storage: 'ok' } });
  });

  it('serves /metrics only with the token, and counts generations, tokens and request latency', async () => {
    expect((await fetch(`${app.url}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${app.url}/metrics`, { headers: { authorization: 'Bearer wrong-token' } });
    expect(wrong.status).toBe(401);
    const response = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(/imagegen_generations_total\{model="core",outcome="completed"\} [1-9]/);
    expect(text).toMatch(/imagegen_tokens_charged_total\{reason="generation_charge"\} [1-9]/);
    expect(text).toMatch(/imagegen_generations_total\{model="core",outcome="failed"\} [1-9]/);
    expect(text).toMatch(/imagegen_tokens_refunded_total\{reason="generation_refund"\} [1-9]/);
    expect(text).toContain(
      'imagegen_http_request_duration_seconds_bucket{le="0.005",route="/api/stability-core/generate"',
    );
    expect(text).toContain('imagegen_chat_streams_open 0');
    expect(text).not.toContain(`route="/images/${'a'.repeat(32)}.png"`);
    // Off without METRICS_TOKEN.
    expect((await fetch(`${downApp.url}/metrics`)).status).toBe(404);
  });
});

describe('a Redis outage', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    app = await startTestApp(pglite, { REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(async () => app?.close());

  it('still serves requests (the rate limit is skipped) and reports itself degraded', async () => {
    // A counted path (probes such as /healthz are never limited).
    for (let i = 0; i < 5; i += 1) expect((await fetch(`${app.url}/api/payments/plans`)).status).toBe(200);
    const ready = await fetch(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'degraded', checks: { redis: 'unavailable' } });
  });
});

describe('the configuration check', () => {
  it('lists a wrong S3_* or REDIS_URL', () => {
    let problems: string[] = [];
    try {
      parseConfig({
        REDIS_URL: 'http://127.0.0.1:6379',
        S3_BUCKET: 'Bad_Bucket',
        S3_ENDPOINT: 'not a url',
        S3_ACCESS_KEY_ID: 'key',
        S3_FORCE_PATH_STYLE: 'maybe',
      });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      problems = (error as ConfigError).problems;
    }
    expect(problems.join('\n')).toMatch(/REDIS_URL: REDIS_URL must start with redis:\/\//);
    expect(problems.join('\n')).toMatch(/S3_BUCKET: S3_BUCKET must be a bucket name/);
    expect(problems.join('\n')).toMatch(/S3_ENDPOINT: S3_ENDPOINT must be an absolute URL/);
    expect(problems.join('\n')).toMatch(/S3_FORCE_PATH_STYLE: S3_FORCE_PATH_STYLE must be true or false/);
    expect(() => parseConfig({ S3_REGION: 'eu-west-1' })).toThrow(/S3_REGION is set but S3_BUCKET is not/);
    expect(() => parseConfig({ S3_BUCKET: 'images' })).toThrow(/S3_REGION is required with S3_BUCKET/);
    expect(() => parseConfig({ S3_BUCKET: 'images', S3_REGION: 'x', S3_ACCESS_KEY_ID: 'a' })).toThrow(
      /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together/,
    );
  });

  it('makes the server exit non-zero, listing the problem', async () => {
    const server = await bundle('server/main.ts');
    const failure = await run(process.execPath, [server.file], {
      env: { ...process.env, REDIS_URL: 'localhost:6379', S3_BUCKET: 'images' },
    })
      .catch((error: { code: number; stderr: string }) => error)
      .finally(() => server.remove());
    expect(failure).toMatchObject({ code: 1 });
    const stderr = (failure as { stderr: string }).stderr;
    expect(stderr).toContain('REDIS_URL');
    expect(stderr).toContain('S3_REGION is required with S3_BUCKET');
  }, 120_000);
});

describe.each(testDatabases())('operator tools on $name', (kind) => {
  let app: TestApp;
  let admin: AdminService;
  beforeAll(async () => {
    app = await startTestApp(kind);
    admin = new AdminService(app.database.db, new LedgerService(app.database.db));
  });
  afterAll(async () => app?.close());

  it('grants and takes tokens with a reason, as ledger rows, and refuses going below zero', async () => {
    const user = await signedInUser(app, `admin-${kind.name}@example.com`);
    expect((await admin.grant(String(user.id), 25, 'support ticket 17')).balanceAfter).toBe(75);
    expect((await admin.take(`admin-${kind.name}@example.com`, 70, 'chargeback')).balanceAfter).toBe(5);
    await expect(admin.take(String(user.id), 6, 'too much')).rejects.toMatchObject({ code: 'INSUFFICIENT_TOKENS' });
    await expect(admin.grant(String(user.id), 0, 'nothing')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(admin.grant(String(user.id), 5, '  ')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(admin.grant('nobody@example.com', 5, 'x')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const { entries } = await admin.ledgerOf(String(user.id));
    expect(entries.map((e) => [e.delta, e.balanceAfter, e.reason, e.reference])).toEqual([
      [50, 50, 'signup_bonus', null],
      [25, 75, 'admin_grant', 'admin: support ticket 17'],
      [-70, 5, 'admin_take', 'admin: chargeback'],
    ]);
    await expectLedgerConsistent(app, user);
    expect((await admin.verify()).violations).toEqual([]);
  });

  it('finds a balance that does not match its ledger', async () => {
    const user = await signedInUser(app, `broken-${kind.name}@example.com`);
    await app.database.db.execute(sql`update ${users} set tokens_amount = tokens_amount + 3 where id = ${user.id}`);
    const { violations } = await admin.verify();
    expect(violations).toEqual([
      { userId: user.id, email: `broken-${kind.name}@example.com`, balance: 53, ledgerSum: 50, lastBalanceAfter: 50 },
    ]);
    await app.database.db.execute(sql`update ${users} set tokens_amount = tokens_amount - 3 where id = ${user.id}`);
  });

  it('disables a user: their sessions end and sign-in is refused with a clear message', async () => {
    const login = `disabled-${kind.name}@example.com`;
    const user = await signedInUser(app, login);
    expect((await getJson(app, user, '/auth/me')).status).toBe(200);
    const done = await admin.disable(String(user.id));
    expect(done).toMatchObject({ changed: true, sessionsEnded: 1 });
    expect((await getJson(app, user, '/auth/me')).status).toBe(401);
    expect((await postJson(app, user, IMAGE_MODELS.core.endpoint, coreBody)).status).toBe(401);

    const { response } = await signInThroughIdp(app, login);
    expect(response?.status).toBe(302);
    expect(locationOf(response!, app.url)).toBe(`${app.url}/login?error=account_disabled`);
    expect(response!.headers.getSetCookie().some((c) => c.startsWith('session=') && !c.startsWith('session=;'))).toBe(
      false,
    );
    expect((await admin.enable(login)).changed).toBe(true);
    const again = await signedInUser(app, login);
    expect((await getJson(app, again, '/auth/me')).status).toBe(200);
  });
});

describe('npm run admin', () => {
  let dataDir: string;
  let userId: number;
  let cli: Bundle;
  beforeAll(async () => {
    cli = await bundle('scripts/admin.ts');
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'admin-cli-'));
    const database = await openDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
    const auth = new AuthService(database.db, new LedgerService(database.db), { sessionTtlDays: 1, starterTokens: 50 });
    const claims = { issuer: 'test', subject: 'cli', email: 'cli@example.com', name: null, avatar: null };
    userId = (await auth.signIn(claims, null)).user.id;
    await database.close();
  });
  afterAll(async () => {
    await cli?.remove();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  // The script `npm run admin` runs, bundled as `npm start` bundles the server.
  const admin = (...args: string[]) =>
    run(process.execPath, [cli.file, ...args], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);

  it('grants, shows the ledger, verifies, disables; exits non-zero on a failure', async () => {
    expect(await admin('grant', 'cli@example.com', '10', '--reason', 'welcome back')).toMatchObject({
      stdout: expect.stringContaining(
        `Granted 10 tokens to user ${userId} (cli@example.com); balance now 60`,
      ) as string,
    });
    const ledger = (await admin('ledger', String(userId))) as { stdout: string };
    expect(ledger.stdout).toContain('admin: welcome back');
    expect(await admin('verify')).toMatchObject({
      stdout: expect.stringContaining('1 users checked, 0 mismatches') as string,
    });
    expect(await admin('take', String(userId), '61', '--reason', 'x')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Cannot take 61 tokens: the balance is 60') as string,
    });
    expect(await admin('disable', 'cli@example.com')).toMatchObject({
      stdout: expect.stringContaining('disabled; 1 sessions ended') as string,
    });

    const database = await openDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
    await database.db.execute(sql`update ${users} set tokens_amount = 7 where id = ${userId}`);
    await database.close();
    const mismatch = (await admin('verify')) as { code: number; stderr: string };
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain(`MISMATCH user ${userId} (cli@example.com): balance 7, ledger sum 60`);
  }, 240_000);
});
