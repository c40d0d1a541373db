import fs from 'node:fs/promises';
import path from 'node:path';
import { machineCatalogue } from '../src/machines/catalogue';
import { statechartDocument } from '../src/machines/mermaid';

/** Writes docs/statecharts/<machine>.md for every machine; `--check` fails on drift instead. */
const check = process.argv.includes('--check');
const dir = path.resolve('docs/statecharts');
await fs.mkdir(dir, { recursive: true });
let stale = 0;
for (const [name, machine] of Object.entries(machineCatalogue)) {
  const file = path.join(dir, `${name}.md`);
  const expected = statechartDocument(name, machine);
  const current = await fs.readFile(file, 'utf8').catch(() => '');
  if (current === expected) continue;
  if (check) {
    console.error(`stale: ${path.relative(process.cwd(), file)}`);
    stale += 1;
  } else {
    await fs.writeFile(file, expected);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}
if (stale > 0) {
  console.error('Statechart diagrams are stale: run `npm run statecharts` and commit the result.');
  process.exit(1);
}
