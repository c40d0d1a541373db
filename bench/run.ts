import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm run bench`: runs every bench/*.bench.ts in turn (or those named on the command
 * line) and prints their reports. Each module's default export is an async function that
 * prints its own figures and throws when a target is missed.
 */
const dir = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = (await fs.readdir(dir))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((name) => f.startsWith(name)))
  .sort();
if (files.length === 0) {
  console.log('No benchmarks found.');
}
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const module = (await import(path.join(dir, file))) as { default: () => Promise<void> };
  try {
    await module.default();
  } catch (error) {
    failed += 1;
    console.error(`${file} FAILED:`, error instanceof Error ? error.message : error);
  }
}
process.exit(failed > 0 ? 1 : 0);
