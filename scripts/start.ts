import fs from 'node:fs';

/** `npm start`: builds the browser app when there is no build yet, then serves everything. */
if (!fs.existsSync('dist/index.html')) {
  console.log('No build found in dist/: building the app first…');
  const { build } = await import('vite');
  await build({ logLevel: 'warn' });
}
await import('../server/main');
