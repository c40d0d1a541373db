import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const committed = path.join(root, 'server/db/migrations');
const drizzleKit = path.join(root, 'node_modules/drizzle-kit/bin.cjs');

/** Every file under `dir`, by its path inside it, with its text. */
async function tree(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, file), await fs.readFile(file, 'utf8'));
  }
  return files;
}

describe('the committed migrations', () => {
  let scratch: string | undefined;
  afterAll(async () => {
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  // drizzle-kit generate on a copy of server/db/migrations: a schema.ts change that no
  // migration carries yet becomes a new migration there (the committed folder is not touched).
  it('match server/db/schema.ts: drizzle-kit generate finds nothing to add', async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'migrations-drift-'));
    const copy = path.join(scratch, 'migrations');
    await fs.cp(committed, copy, { recursive: true });
    const before = await tree(copy);
    // drizzle-kit reads --out relative to the working directory (it prefixes "./").
    const { stdout, stderr } = await run(
      process.execPath,
      [
        drizzleKit,
        'generate',
        '--dialect=postgresql',
        '--schema=./server/db/schema.ts',
        `--out=${path.relative(root, copy)}`,
      ],
      // A question (a column renamed or dropped?) would wait for an answer that never comes.
      { cwd: root, timeout: 60_000, env: { ...process.env, FORCE_COLOR: '0' } },
    );
    const after = await tree(copy);
    const changed = [...after].filter(([file, text]) => before.get(file) !== text);
    const report = changed.map(([file, text]) => `--- ${file}\n${file.endsWith('.sql') ? text : '(changed)'}`);
    expect(
      report.join('\n'),
      'server/db/schema.ts differs from the committed migrations: run `npm run db:generate` and commit the new migration',
    ).toBe('');
    // drizzle-kit exits 0 even when it fails (a schema that does not load, or a renamed or
    // dropped column, which it asks about in a terminal only): only its own words are a pass.
    expect(
      `${stdout}\n${stderr}`,
      'drizzle-kit generate did not find the schema and the migrations equal: run `npm run db:generate` in a terminal',
    ).toContain('No schema changes, nothing to migrate');
  }, 90_000);
});
