import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApp, type App, type AppDeps } from '../../server/app';
import { parseConfig, type Config } from '../../server/config';
import { openDatabase, type Database } from '../../server/db/client';

export interface TestDatabaseKind {
  name: 'pglite' | 'postgres';
  open(): Promise<Database>;
}

/**
 * The databases every server test runs on: embedded PGlite always, and a real PostgreSQL
 * when TEST_DATABASE_URL is set (CI sets it). Each open() gets a fresh, empty database
 * with the committed migrations applied.
 */
export function testDatabases(): TestDatabaseKind[] {
  const kinds: TestDatabaseKind[] = [{ name: 'pglite', open: () => openDatabase({ kind: 'pglite' }) }];
  const url = process.env.TEST_DATABASE_URL;
  if (url) kinds.push({ name: 'postgres', open: () => openFreshPostgres(url) });
  return kinds;
}

export function postgresUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || undefined;
}

export async function openFreshPostgres(adminUrl: string, poolSize = 10): Promise<Database> {
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.href, poolSize });
  return {
    ...database,
    close: async () => {
      await database.close();
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
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
  deps: Pick<AppDeps, 'providers' | 'chat' | 'storage'> = {},
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
