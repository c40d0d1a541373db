import { defineConfig, type TestProjectConfiguration } from 'vitest/config';
import base from './vitest.config';
import { UnloadableFileAsFailedTest } from './tests/mutation-reporter';

/**
 * The vitest configuration Stryker runs (stryker.config.mjs): the projects of vitest.config.ts,
 * taken from there so that they stay the same, less e2e. The e2e tests start the whole
 * application with a browser; they are too slow to run once per mutant, and the code they
 * reach is pinned by the unit, server and ui tests.
 *
 * MUTATION_TESTS (comma-separated globs, e.g. `tests/domain/**\/*.test.ts`) narrows the run
 * to those test files: each glob goes to the project whose folder holds it, and a project
 * given none is left out. Stryker's own --testFiles would do the same, but with it Stryker
 * 9 activates a module-level ("static") mutant only after its module has loaded, so every
 * static mutant survives (stryker-js issue 6144).
 */
type InlineProject = Extract<TestProjectConfiguration, { test?: unknown }>;

function isInlineProject(project: TestProjectConfiguration): project is InlineProject {
  return typeof project === 'object' && 'test' in project;
}

/** The part of a glob before its first wildcard: `tests/domain/` of `tests/domain/**\/*.ts`. */
function globBase(glob: string): string {
  const wildcard = glob.search(/[*?[{]/);
  return wildcard === -1 ? glob : glob.slice(0, wildcard);
}

function narrowed(project: InlineProject, tests: string[]): InlineProject | null {
  const include = project.test?.include ?? [];
  const own = tests.filter((glob) =>
    include.some((pattern) => {
      const [a, b] = [globBase(glob), globBase(pattern)];
      return a.startsWith(b) || b.startsWith(a);
    }),
  );
  return own.length === 0 ? null : { ...project, test: { ...project.test, include: own } };
}

const selected = (process.env.MUTATION_TESTS ?? '')
  .split(',')
  .map((glob) => glob.trim())
  .filter(Boolean);

const projects = (base.test?.projects ?? [])
  .filter((project) => !isInlineProject(project) || project.test?.name !== 'e2e')
  .map((project) => (isInlineProject(project) && selected.length > 0 ? narrowed(project, selected) : project))
  .filter((project): project is TestProjectConfiguration => project !== null);

export default defineConfig({
  ...base,
  test: { ...base.test, projects, reporters: ['default', new UnloadableFileAsFailedTest()] },
});
