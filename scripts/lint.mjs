// `npm run lint`: ESLint over the project, skipped when nothing it could read has changed
// since its last clean run on this checkout. ESLint's own --cache is per file and unsafe with
// type-aware rules (a file's result depends on the types of the files it imports), so the
// key here is every file git sees, tracked or new (sources, configs, the lockfile): any
// change anywhere lints everything again. The key lives in node_modules/.cache, never
// committed; a clean install has none and lints in full.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const stampFile = path.join('node_modules', '.cache', 'lint', 'clean-tree');

/** A digest of every file git sees, tracked or new, by path and content. */
function treeKey() {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter(Boolean)
    .sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(file).update('\0');
    // A file git lists but the tree no longer has (deleted, not yet staged) counts as empty.
    if (fs.existsSync(file)) hash.update(fs.readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}
const key = treeKey();

// Extra arguments (--fix, a file) run ESLint as asked, without the key.
const args = process.argv.slice(2);
if (args.length === 0 && fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === key) {
  console.log('ESLint: nothing changed since its last clean run of this tree.');
  process.exit(0);
}
try {
  execFileSync(process.execPath, ['node_modules/eslint/bin/eslint.js', '.', '--max-warnings=0', ...args], {
    stdio: 'inherit',
  });
} catch {
  process.exit(1);
}
// A file changed while ESLint ran: what it read is not known to be the tree of `key`.
if (args.length === 0 && treeKey() === key) {
  fs.mkdirSync(path.dirname(stampFile), { recursive: true });
  fs.writeFileSync(stampFile, key);
}
