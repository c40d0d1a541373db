import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildBrowserApp } from '../../scripts/build-app.mjs';
import { freePort } from '../server/helpers';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
  }
}

async function waitForHealth(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the app did not become healthy at ${url}`);
}

async function processGroupGone(pgid: number, deadline: number): Promise<void> {
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) throw new Error(`the processes of npm start (group ${pgid}) did not exit`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * `npm start` exactly as a person would run it, on a fresh DATA_DIR with every embedded
 * default (PGlite, local sign-in, offline engines), plus `env`; the browser app must be built.
 */
export async function startApp(env: Record<string, string> = {}): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const port = await freePort();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'imagegen-e2e-'));
  const baseUrl = `http://localhost:${port}`;
  const child = spawn('npm', ['start'], {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      APP_URL: baseUrl,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000',
      DATABASE_URL: '',
      ...env,
    },
  });
  await waitForHealth(baseUrl, Date.now() + 90_000);
  return {
    baseUrl,
    stop: async () => {
      if (child.pid && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(-child.pid, 'SIGTERM');
        await exited;
        // npm can exit before the server it started has closed its database: wait for the
        // whole process group, or the data folder would be removed while it is written.
        await processGroupGone(child.pid, Date.now() + 30_000);
      }
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Builds the browser app and starts it once for the suites (startApp). */
export default async function setup(project: TestProject) {
  buildBrowserApp();
  const app = await startApp();
  project.provide('baseUrl', app.baseUrl);
  return () => app.stop();
}
