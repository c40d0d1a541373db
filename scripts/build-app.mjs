// The browser app's production build (vite build into dist/), for `npm start`, the e2e
// tests and the frontend benchmark alike. NODE_ENV is set to production for it: Vite
// follows the NODE_ENV it finds, and under a test runner ("test") it would bundle React's
// development code (twice the size, with its console warnings).
import { execFileSync } from 'node:child_process';

export function buildBrowserApp() {
  execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], {
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
