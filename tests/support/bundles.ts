import fs from 'node:fs/promises';
import path from 'node:path';
import { BUNDLE_DIR, bundleServer } from '../../scripts/server-bundle';

export interface Bundle {
  /** The plain JavaScript module to run with `node`. */
  file: string;
  remove(): Promise<void>;
}

/**
 * `entry` (server/main.ts, scripts/admin.ts) bundled as `npm start` bundles the server
 * (scripts/server-bundle.ts), into a folder of its own under .build/. A child process then
 * runs plain JavaScript in Node, as production does, instead of loading TypeScript through
 * tsx: seconds of CPU less for each process (docs/testing.md, the suite's time), most of it
 * the embedded database's migration child, which tsx would load again.
 */
export async function bundle(entry: string): Promise<Bundle> {
  await fs.mkdir(BUNDLE_DIR, { recursive: true });
  const dir = await fs.mkdtemp(path.join(BUNDLE_DIR, 'test-'));
  const file = await bundleServer(entry, path.join(dir, path.basename(entry).replace(/\.ts$/, '.mjs')));
  return { file, remove: () => fs.rm(dir, { recursive: true, force: true }) };
}
