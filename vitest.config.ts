import os from 'node:os';
import { defineConfig } from 'vitest/config';

// Node 25 and later define a global localStorage of their own (without --localstorage-file it
// is undefined), and vitest's jsdom environment does not replace a global that already exists,
// so the UI tests would reach Node's rather than jsdom's. Older Node rejects the flag.
const nodeMajor = Number(process.versions.node.split('.')[0]);
const jsdomExecArgv = nodeMajor >= 25 ? ['--no-webstorage'] : [];

// Vitest's default is one worker fewer than the cores: a single one on two cores. The unit,
// ui and server files wait on timers and I/O much of the time: two at once even on two cores.
const workers = Math.max(2, os.availableParallelism() - 1);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'tests/domain/**/*.test.ts',
            'tests/api/**/*.test.ts',
            'tests/machines/**/*.test.ts',
            'tests/statecharts/**/*.test.ts',
          ],
          environment: 'node',
          // Projects of one group share its workers and must state the same count.
          maxWorkers: workers,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'server',
          include: ['tests/server/**/*.test.ts'],
          exclude: ['tests/server/scale/**'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // Migrates one embedded and one PostgreSQL database that every test copies.
          globalSetup: ['tests/server/global-setup.ts'],
          maxWorkers: workers,
          sequence: { groupOrder: 1 },
          // A worker runs its files one after another in one module graph: the server's
          // modules (Fastify, the identity provider, sharp, PGlite...) load once per worker
          // instead of once per file. Each file still starts its own apps on its own
          // databases; nothing in tests/server mocks modules or changes globals.
          isolate: false,
        },
      },
      {
        test: {
          // Two instances under a thousand charges and a kill -9: their timings assume the
          // machine to themselves, so they run alone, after everything else.
          name: 'server-scale',
          include: ['tests/server/scale/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 60_000,
          globalSetup: ['tests/server/global-setup.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: './vite.config.ts',
        test: {
          name: 'ui',
          include: ['tests/ui/**/*.test.tsx'],
          environment: 'jsdom',
          setupFiles: ['tests/ui/support/setup.ts'],
          // As in the server project: a worker runs its files in one module graph, so React,
          // Radix, the syntax highlighter and the app's modules load once per worker. Each file
          // still gets a fresh jsdom page; support/setup.ts empties the storages after each test.
          isolate: false,
          execArgv: jsdomExecArgv,
          maxWorkers: workers,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['tests/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['tests/e2e/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // One browser and one application at a time, on a machine no other test loads.
          fileParallelism: false,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
