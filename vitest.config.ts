import { defineConfig } from 'vitest/config';

// Node 25 and later define a global localStorage of their own (without --localstorage-file it
// is undefined), and vitest's jsdom environment does not replace a global that already exists,
// so the UI tests would reach Node's rather than jsdom's. Older Node rejects the flag.
const nodeMajor = Number(process.versions.node.split('.')[0]);
const jsdomExecArgv = nodeMajor >= 25 ? ['--no-webstorage'] : [];

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
        },
      },
      {
        test: {
          name: 'server',
          include: ['tests/server/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: './vite.config.ts',
        test: {
          name: 'ui',
          include: ['tests/ui/**/*.test.tsx'],
          environment: 'jsdom',
          execArgv: jsdomExecArgv,
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
          fileParallelism: false,
        },
      },
    ],
  },
});
