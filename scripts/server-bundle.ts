import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where bundles are written: inside the project (so packages resolve), never committed. */
export const BUNDLE_DIR = path.join(root, '.build');

/**
 * The server as production runs it: its TypeScript bundled once into one plain JavaScript
 * module, the packages left in node_modules and imported as they are. The server's process
 * then runs without a TypeScript loader, which costs about 50 MB of resident memory (a
 * loader thread, transformed sources and their maps) and a larger heap for every garbage
 * collection to walk. Bundling takes well under a second, so `npm start` does it every
 * time and never runs a stale bundle. The migrations are copied beside the bundle, where
 * server/db/client.ts looks for them.
 */
export async function bundleServer(entry: string, outFile: string): Promise<string> {
  const options = {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  } as const;
  await build({ ...options, entryPoints: [path.resolve(root, entry)], outfile: outFile });
  // The embedded database's migration child, run as its own process (server/db/client.ts).
  await build({
    ...options,
    entryPoints: [path.join(root, 'server/db/migrate-child.ts')],
    outfile: path.join(path.dirname(outFile), 'migrate-child.mjs'),
  });
  await fs.cp(path.join(root, 'server/db/migrations'), path.join(path.dirname(outFile), 'migrations'), {
    recursive: true,
  });
  return outFile;
}

/** The bundle `npm start` runs (scripts/start.mjs). */
export const SERVER_BUNDLE = path.join(BUNDLE_DIR, 'server', 'main.mjs');
