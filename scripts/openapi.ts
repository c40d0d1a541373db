import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../server/app';
import { parseConfig } from '../server/config';
import { openDatabase } from '../server/db/client';
import prettier from 'prettier';
import { OPENAPI_FILE } from '../server/http/openapi';

/**
 * Writes docs/openapi.json: the API description the server serves at /api/openapi.json, made
 * from the routes registered from their contracts (src/domain/api). tests/server/openapi.test.ts
 * fails when the served description and this file differ, and validates the file.
 */
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'openapi-'));
const database = await openDatabase({ kind: 'pglite' });
try {
  const config = parseConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, API_DOCS: 'true' }, { webDir: undefined });
  const app = await buildApp({ config, database, cookieSecret: randomBytes(32).toString('hex') });
  await app.server.ready();
  // Laid out as the project's formatter would, so `prettier --check` passes on it.
  const options = await prettier.resolveConfig(OPENAPI_FILE);
  await fs.writeFile(
    OPENAPI_FILE,
    await prettier.format(JSON.stringify(app.server.swagger()), { ...options, parser: 'json' }),
  );
  console.log(`wrote ${OPENAPI_FILE}`);
  await app.server.close();
} finally {
  await database.close();
  await fs.rm(dataDir, { recursive: true, force: true });
}
