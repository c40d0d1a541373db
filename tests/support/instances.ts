import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { bundle, type Bundle } from './bundles';

/**
 * Real app instances, each its own process running server/main.ts in production mode (the
 * bundle `npm start` runs, built once per test process), on one PostgreSQL, one Redis and one S3 server.
 */
export interface Instance {
  name: string;
  url: string;
  process: ChildProcess;
  exited: Promise<number | null>;
  /** SIGTERM (graceful) or SIGKILL (a crash); resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

let server: Promise<Bundle> | undefined;

async function serverBundle(): Promise<string> {
  server ??= bundle('server/main.ts');
  return (await server).file;
}

/** Removes the server bundle the instances of this test process ran. */
export async function removeServerBundle(): Promise<void> {
  const built = server;
  server = undefined;
  await (await built)?.remove();
}

export async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const port = await freeLoopbackPort();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `instance-${name}-`));
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [await serverBundle()], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      APP_URL: url,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'error',
      // The name the instance's workers claim jobs under (generation_requests.claimed_by).
      INSTANCE_ID: name,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => fs.rm(dataDir, { recursive: true, force: true }));
  const deadline = Date.now() + 240_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance ${name} exited with ${child.exitCode} during start`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`instance ${name} did not start within 240 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    name,
    url,
    process: child,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A fresh, empty PostgreSQL database on the server of `adminUrl`; dropped by `drop()`. */
export async function createPostgresDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `scale_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}
