import { spawn } from 'node:child_process';

/**
 * `npm run dev`: the API with reload on port 3001 behind Vite's dev server (5173), which
 * proxies the API paths, so the browser sees one origin.
 */
const child = spawn('npx', ['tsx', 'watch', '--clear-screen=false', 'server/main.ts'], {
  stdio: 'inherit',
  env: {
    ...process.env,
    NODE_ENV: 'development',
    PORT: process.env.API_PORT ?? '3001',
    APP_URL: process.env.APP_URL ?? 'http://localhost:5173',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  },
});
child.on('exit', (code) => process.exit(code ?? 0));
