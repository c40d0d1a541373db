import type { RunnerTestCase } from 'vitest';
import type { Reporter, Vitest } from 'vitest/node';

/**
 * For mutation runs only (vitest.mutation.config.ts). Stryker's vitest runner scores a mutant
 * from the tests vitest collected, and a test file whose imports throw (a mutant that breaks a
 * module as it loads: a chart with no initial state, a table emptied) collects none, so the
 * mutant was scored as survived although every test of the file fails with it
 * (stryker-mutator/stryker-js issue 6150). This reporter gives such a file one failed test,
 * "the file loads", carrying the load error, in the state Stryker reads.
 */
export class UnloadableFileAsFailedTest implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(): void {
    for (const file of this.vitest?.state.getFiles() ?? []) {
      if (file.result?.state !== 'fail' || file.tasks.length > 0) continue;
      const loads = {
        type: 'test',
        id: `${file.id}_loads`,
        name: 'the file loads',
        fullName: `${file.name} > the file loads`,
        fullTestName: 'the file loads',
        mode: 'run',
        meta: {},
        file,
        suite: file,
        timeout: 0,
        annotations: [],
        artifacts: [],
        result: { state: 'fail', errors: file.result.errors ?? [] },
      } satisfies Omit<RunnerTestCase, 'context'>;
      // A test's `context` is built by vitest while it runs; nothing reads it after the run.
      file.tasks.push(loads as unknown as RunnerTestCase);
    }
  }
}
