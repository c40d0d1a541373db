import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { it } from 'vitest';
import { buildApp, type App, type AppDeps } from '../../server/app';
import { parseConfig, type Config } from '../../server/config';
import { openDatabase, type Database } from '../../server/db/client';
import { PGLITE_TEMPLATE_ENV, POSTGRES_TEMPLATE_ENV, adminQuery, buildPgliteTemplate } from './global-setup';

export interface TestDatabaseKind {
  name: 'pglite' | 'postgres';
  open(): Promise<Database>;
}

const POSTGRES_EXAMPLE_URL = 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_DEFAULT_URL = 'redis://127.0.0.1:6379';

/**
 * The one rule for tests that need an outside server: without it they fail, with a test
 * named after what is missing that says what to start and which variable to set. They
 * never skip: a green run means they ran.
 */
function registerMissing(what: string, howTo: string): void {
  it(`needs ${what}`, () => {
    throw new Error(`these tests need ${what}: ${howTo}`);
  });
}

/**
 * The admin URL of the PostgreSQL server (TEST_DATABASE_URL), for a suite that needs one.
 * Call it while tests are collected (in a describe or at the top of the file). Without the
 * variable it registers a failing test there and returns undefined: register nothing else.
 */
export function requirePostgres(): string | undefined {
  const url = postgresUrl();
  if (!url) registerMissing('PostgreSQL', `start it and set TEST_DATABASE_URL=${POSTGRES_EXAMPLE_URL}`);
  return url;
}

/**
 * The URL of a Redis server that answers (TEST_REDIS_URL, else the local default), for a
 * suite that needs one; collected like requirePostgres, awaited in an async describe.
 */
export async function requireRedis(): Promise<string | undefined> {
  const url = process.env.TEST_REDIS_URL || REDIS_DEFAULT_URL;
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // The socket's own error (ECONNREFUSED...) says more than the rejection ("Connection is closed").
  let socketError: Error | undefined;
  redis.on('error', (error: Error) => {
    socketError ??= error;
  });
  try {
    await redis.connect();
    await redis.ping();
    return url;
  } catch (error) {
    const reason = (socketError ?? (error instanceof Error ? error : new Error(String(error)))).message;
    registerMissing('Redis', `start it on 127.0.0.1:6379 or set TEST_REDIS_URL=redis://host:port (${url}: ${reason})`);
    return undefined;
  } finally {
    redis.disconnect();
  }
}

/** A copy of the migrated embedded database of this run (tests/server/global-setup.ts). */
export const pglite: TestDatabaseKind = { name: 'pglite', open: openFreshPglite };

/**
 * The databases every server test runs on: embedded PGlite, and a real PostgreSQL through
 * TEST_DATABASE_URL (CI sets it; without it the file gets requirePostgres's failing test).
 * TEST_DATABASES=pglite keeps to the embedded one: the run on CI's second Node version
 * (`npm run test:runtime`), where what depends on the Node version is the code and the
 * embedded engine, not PostgreSQL's server; the suites about PostgreSQL itself (LISTEN and
 * NOTIFY, concurrency on its locks, two instances) still ask for it with requirePostgres.
 * Each open() gets a fresh database with the committed migrations applied. Call it while
 * tests are collected; inside a hook or a test use `pglite`.
 */
export function testDatabases(): TestDatabaseKind[] {
  const kinds: TestDatabaseKind[] = [pglite];
  if (process.env.TEST_DATABASES === 'pglite') return kinds;
  const url = requirePostgres();
  if (url) kinds.push({ name: 'postgres', open: () => openFreshPostgres(url) });
  return kinds;
}

export function postgresUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || undefined;
}

/**
 * The template as PGlite reads it: PGlite only asks a `loadDataDir` Blob for `arrayBuffer()`,
 * and Node's own Blob answers that by streaming its bytes back in pieces and joining them,
 * about 5% of the server files' CPU; a copy of bytes held in memory costs a few milliseconds.
 */
class TemplateBlob extends Blob {
  private readonly template: Uint8Array<ArrayBuffer>;

  constructor(bytes: Uint8Array) {
    super();
    // A plain array of its own (a Buffer's slice() would share memory rather than copy).
    this.template = new Uint8Array(bytes);
  }

  /** A copy for each database: the template itself is never handed out. */
  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.template.slice().buffer);
  }
}

let pgliteTemplate: Promise<Blob> | undefined;

/**
 * A new embedded database copied from the run's migrated template (written once by the
 * global setup); outside it (a bench), from one migrated once in this process.
 */
export async function openFreshPglite(): Promise<Database> {
  pgliteTemplate ??= (async () => {
    const file = process.env[PGLITE_TEMPLATE_ENV];
    const bytes = file ? await fs.readFile(file) : new Uint8Array(await (await buildPgliteTemplate()).arrayBuffer());
    return new TemplateBlob(bytes);
  })();
  return openDatabase({ kind: 'pglite', loadDataDir: await pgliteTemplate });
}

/**
 * A new database on the server of `adminUrl`, dropped by drop(): a copy of the run's
 * migrated template when there is one on that server, else empty (openDatabase migrates it).
 */
export async function createFreshPostgres(
  adminUrl: string,
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const template = process.env[POSTGRES_TEMPLATE_ENV];
  const fromTemplate = template && adminUrl === process.env.TEST_DATABASE_URL;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}${fromTemplate ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.href, drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** One fresh PostgreSQL database that several app instances open (the two-instance suites). */
export interface SharedPostgres {
  kind: TestDatabaseKind;
  drop(): Promise<void>;
}

export async function sharedPostgres(adminUrl: string, poolSize = 4): Promise<SharedPostgres> {
  const fresh = await createFreshPostgres(adminUrl);
  return {
    kind: { name: 'postgres', open: () => openDatabase({ kind: 'postgres', url: fresh.url, poolSize }) },
    drop: () => fresh.drop(),
  };
}

export async function openFreshPostgres(adminUrl: string, poolSize = 10): Promise<Database> {
  const fresh = await createFreshPostgres(adminUrl);
  const database = await openDatabase({ kind: 'postgres', url: fresh.url, poolSize }).catch(async (error: unknown) => {
    await fresh.drop();
    throw error;
  });
  return {
    ...database,
    close: async () => {
      await database.close();
      await fresh.drop();
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

export interface TestApp extends App {
  url: string;
  config: Config;
  database: Database;
  close(): Promise<void>;
}

/** The real app on a real port (the sign-in flow is real HTTP), on the given database. */
export async function startTestApp(
  kind: TestDatabaseKind,
  env: Record<string, string> = {},
  overrides: Partial<Config> = {},
  deps: Pick<AppDeps, 'providers' | 'chat' | 'storage' | 'logStream' | 'bus'> = {},
): Promise<TestApp> {
  const port = await freePort();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'imagegen-test-'));
  const config = parseConfig(
    {
      NODE_ENV: 'test',
      PORT: String(port),
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '100000',
      // Tests call the reconciler themselves.
      GENERATION_RECONCILE_INTERVAL_MS: '0',
      PAYMENTS_RECONCILE_INTERVAL_MS: '0',
      SUBSCRIPTION_RENEWAL_INTERVAL_MS: '0',
      // Requests still open when a test closes the app are cut at once.
      SHUTDOWN_GRACE_MS: '0',
      ...env,
    },
    { webDir: undefined, ...overrides },
  );
  const database = await kind.open();
  const app = await buildApp({ config, database, cookieSecret: randomBytes(32).toString('base64url'), ...deps });
  await app.server.listen({ port, host: '127.0.0.1' });
  return {
    ...app,
    url: `http://localhost:${port}`,
    config,
    database,
    close: async () => {
      await app.server.close();
      await database.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A minimal cookie jar: enough for the sign-in redirects between our app and the local IdP. */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair?.indexOf('=') ?? -1;
      if (!pair || index < 0) continue;
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      const expired = /max-age=0|expires=Thu, 01 Jan 1970/i.test(line);
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** One request without following redirects, cookies from and into the jar. */
export async function step(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header();
  if (cookie) headers.set('cookie', cookie);
  const response = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.store(response);
  return response;
}

export function locationOf(response: Response, base: string): string {
  const location = response.headers.get('location');
  if (!location) throw new Error(`expected a redirect, got ${response.status}`);
  return new URL(location, base).href;
}

/**
 * Drives the whole authorization-code flow against the in-process identity provider the
 * way a browser would, and stops at our callback's response.
 */
export async function signInThroughIdp(
  app: { url: string },
  login: string,
  options: { jar?: CookieJar; query?: string; stopBeforeCallback?: boolean } = {},
): Promise<{ jar: CookieJar; callbackUrl: string; response?: Response }> {
  const jar = options.jar ?? new CookieJar();
  let response = await step(
    jar,
    `${app.url}/auth/google${options.query ?? '?successRedirect=/dashboard&failureRedirect=/login'}`,
  );
  let url = locationOf(response, app.url);
  // The IdP's authorization endpoint sends the browser to its login interaction.
  response = await step(jar, url);
  url = locationOf(response, url);
  response = await step(jar, url);
  if (response.status !== 200) throw new Error(`login form: ${response.status}`);
  await response.text();
  response = await step(jar, url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url },
    body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
  });
  url = locationOf(response, url);
  // Back at the authorization endpoint, which now issues the code to our callback.
  for (let hops = 0; hops < 5 && !url.includes('/auth/google/callback'); hops += 1) {
    response = await step(jar, url);
    url = locationOf(response, url);
  }
  if (!url.includes('/auth/google/callback')) throw new Error(`never reached the callback: ${url}`);
  if (options.stopBeforeCallback) return { jar, callbackUrl: url };
  response = await step(jar, url);
  return { jar, callbackUrl: url, response };
}
