import path from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue #27 item 5: the layers' boundaries are kept by lint, which fails on an import cycle
 * or a boundary crossed. Each case lints code held in memory, as if it were the file it
 * names, with the project's own ESLint config; only the rules that guard the boundaries
 * run (the type-aware ones need the file on disk).
 */
const BOUNDARY_RULES = new Set(['import-x/no-cycle', 'import-x/no-restricted-paths', 'no-restricted-imports']);

let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({
    cwd: path.resolve(import.meta.dirname, '../..'),
    ruleFilter: ({ ruleId }) => BOUNDARY_RULES.has(ruleId),
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });
});

async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  const messages = result?.messages ?? [];
  // A parse error would hide every rule: no case may pass for that reason.
  expect(messages.filter((message) => message.fatal)).toEqual([]);
  return messages.map((message) => message.ruleId ?? '');
}

describe('lint guards the layers', () => {
  it('fails src/domain importing src/api', async () => {
    const code = "import { request } from '../api/client';\nexport const x = request;\n";
    expect(await boundaryErrors('src/domain/planted.ts', code)).toContain('import-x/no-restricted-paths');
  });

  it('fails src/domain importing the server or the views', async () => {
    const server = "import { loadConfig } from '../../server/config';\nexport const x = loadConfig;\n";
    const view = "import { Header } from '../ui/shell/Header';\nexport const x = Header;\n";
    expect(await boundaryErrors('src/domain/planted.ts', server)).toContain('import-x/no-restricted-paths');
    expect(await boundaryErrors('src/domain/planted.ts', view)).toContain('import-x/no-restricted-paths');
  });

  it('fails a statechart importing anything of ours but src/domain', async () => {
    const api = "import { fetchModels } from '../api/chat';\nexport const x = fetchModels;\n";
    const i18n = "import { i18next } from '../i18n';\nexport const x = i18next;\n";
    expect(await boundaryErrors('src/machines/planted.ts', api)).toContain('import-x/no-restricted-paths');
    expect(await boundaryErrors('src/machines/planted.ts', i18n)).toContain('import-x/no-restricted-paths');
  });

  it('lets a statechart import src/domain and another statechart', async () => {
    const code =
      "import { problemOf } from '../domain/errors';\nimport { sessionMachine } from './session';\n" +
      'export const x = [problemOf, sessionMachine];\n';
    expect(await boundaryErrors('src/machines/planted.ts', code)).toEqual([]);
  });

  it("fails a view calling src/api's requests or client, not the actors it provides", async () => {
    const request = "import { fetchModels } from '../../api/chat';\nexport const x = fetchModels;\n";
    const client = "import { request } from '../../api/client';\nexport const x = request;\n";
    const actor = "import { liveChatSendMachine } from '../../api/chat';\nexport const x = liveChatSendMachine;\n";
    expect(await boundaryErrors('src/ui/chat/Planted.tsx', request)).toContain('no-restricted-imports');
    expect(await boundaryErrors('src/ui/chat/Planted.tsx', client)).toContain('no-restricted-imports');
    expect(await boundaryErrors('src/ui/chat/Planted.tsx', actor)).toEqual([]);
  });

  it('fails an import cycle', async () => {
    // src/domain/routes.ts imports gallery-search.ts: gallery-search.ts importing it back closes a cycle.
    const code = "import { screens } from './routes';\nexport const x = screens;\n";
    expect(await boundaryErrors('src/domain/gallery-search.ts', code)).toContain('import-x/no-cycle');
  });

  it('fails an import cycle through a dynamic import', async () => {
    // src/i18n/index.ts loads texts.en.ts on demand: texts.en.ts importing it closes a cycle.
    const code = "import { i18next } from './index';\nexport const texts = i18next;\n";
    expect(await boundaryErrors('src/i18n/texts.en.ts', code)).toContain('import-x/no-cycle');
  });
});
