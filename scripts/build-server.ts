import { bundleServer, SERVER_BUNDLE } from './server-bundle';

/** Bundles the server for `npm start` (scripts/start.mjs runs this in a child process). */
await bundleServer('server/main.ts', SERVER_BUNDLE);
