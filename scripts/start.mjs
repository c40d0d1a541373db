// `npm start`: builds the browser app when there is no build yet, bundles the server
// (scripts/server-bundle.ts) and runs it in this process, in plain Node: no TypeScript
// loader stays in the server's memory. Both builds run in child processes that exit.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { buildBrowserApp } from './build-app.mjs';

if (!fs.existsSync('dist/index.html')) {
  console.log('No build found in dist/: building the app first…');
  buildBrowserApp();
}
execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-server.ts'], { stdio: 'inherit' });
await import('../.build/server/main.mjs');
