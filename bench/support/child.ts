import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLE_DIR, bundleServer } from '../../scripts/server-bundle';

/**
 * A TypeScript module of bench/support run as its own Node process, bundled first and run
 * in plain Node as `npm start` runs the server (scripts/server-bundle.ts), spoken to with
 * request/reply messages. Benchmarks put the server, the fake provider and the
 * client in separate processes, as they are in production: in one process each would
 * wait for the others' work on the shared event loop and the figures would measure that.
 */
export interface Child {
  /** Sends `{ type, ...payload }` and resolves with the child's reply to it. */
  ask<T>(type: string, payload?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

export interface ChildRequest {
  id: number;
  type: string;
  [key: string]: unknown;
}

const here = path.dirname(fileURLToPath(import.meta.url));

export async function startChild(
  module: string,
  env: Record<string, string> = {},
  options: { discardStdout?: boolean } = {},
): Promise<Child> {
  const bundle = await bundleServer(
    path.join(here, module),
    path.join(BUNDLE_DIR, 'bench', module.replace(/\.ts$/, '.mjs')),
  );
  const child: ChildProcess = fork(bundle, [], {
    // The young generation's size and MALLOC_ARENA_MAX as `npm start` sets them (package.json).
    execArgv: ['--max-semi-space-size=4'],
    env: { ...process.env, MALLOC_ARENA_MAX: '1', ...env },
    stdio: ['ignore', options.discardStdout ? 'ignore' : 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  child.on('message', (message: { id: number; ok: boolean; value?: unknown; error?: string }) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.value);
    else waiter.reject(new Error(message.error));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${module} exited with ${code}`));
    pending.clear();
  });
  const ask = <T>(type: string, payload: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, type, ...payload });
    });
  await ask('ready');
  return {
    ask,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
