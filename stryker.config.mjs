// Mutation testing (npm run mutation): see docs/testing.md, "Mutation testing".
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // Log calls' texts and fields are not mutated (tests/mutation-log-ignorer.mjs says why).
  plugins: ['@stryker-mutator/*', './tests/mutation-log-ignorer.mjs'],
  ignorers: ['log-lines'],
  // The unit, server and ui projects of vitest.config.ts; e2e is left out.
  vitest: { configFile: 'vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    // The state machines, less the tooling that draws and lists them (diagrams, visualiser).
    'src/machines/**/*.ts',
    '!src/machines/mermaid.ts',
    '!src/machines/catalogue.ts',
    '!src/machines/live-actors.ts',
    'src/domain/**/*.ts',
    // The server's money paths.
    'server/ledger/**/*.ts',
    'server/jobs/**/*.ts',
    'server/background/**/*.ts',
    'server/payments/**/*.ts',
    'server/chat/service.ts',
    'server/images/service.ts',
    'server/portraits/service.ts',
  ],
  // The machine is shared: one or two test processes, not one per core.
  concurrency: 2,
  // The server tests open embedded PostgreSQL databases: a slow start is not an endless loop.
  timeoutMS: 20_000,
  timeoutFactor: 2,
  // The first run of the server tests in one thread takes longer than Stryker's 5 minutes.
  dryRunTimeoutMinutes: 30,
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  // Stryker copies the project there; .local/ is ignored by git, eslint and prettier.
  tempDirName: '.local/stryker-tmp',
  // Builds and local data that no test of the sandbox reads.
  ignorePatterns: ['/dist', '/dist-sourcemaps', '/.build', '/.local', '/data'],
  cleanTempDir: true,
  // Types are checked by npm run typecheck, not per mutant.
  disableTypeChecks: true,
};
