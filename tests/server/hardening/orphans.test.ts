import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORPHAN_FILE_MIN_AGE_MS } from '../../../server/images/service';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { imagesOf, postJson, signedInUser } from '../images/support';

async function writeFile(app: TestApp, ageMs: number): Promise<string> {
  const fileName = `${randomBytes(16).toString('hex')}.png`;
  await fs.mkdir(app.config.imagesDir, { recursive: true });
  const filePath = path.join(app.config.imagesDir, fileName);
  await fs.writeFile(filePath, randomBytes(64));
  const when = new Date(Date.now() - ageMs);
  await fs.utimes(filePath, when, when);
  return fileName;
}

describe.each(testDatabases())('orphan image files on $name', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(async () => {
    await app.close();
  });

  it('a file a crash left without its row stops being served once the sweep runs; files with rows and fresh writes stay', async () => {
    const user = await signedInUser(app, 'orphans@example.com');
    const generated = await postJson(app, user, '/api/stability-core/generate', {
      prompt: 'a fox',
      aspect_ratio: '1:1',
    });
    expect(generated.status).toBe(200);
    const [image] = await imagesOf(app, user);
    if (!image) throw new Error('no image');
    const old = new Date(Date.now() - 2 * ORPHAN_FILE_MIN_AGE_MS);
    await fs.utimes(path.join(app.config.imagesDir, image.fileName), old, old);

    const orphan = await writeFile(app, 2 * ORPHAN_FILE_MIN_AGE_MS);
    const inFlight = await writeFile(app, 1000);
    expect((await fetch(`${app.url}/images/${orphan}`)).status).toBe(200);

    expect(await app.services.images.sweepOrphanFiles()).toBe(1);
    expect((await fetch(`${app.url}/images/${orphan}`)).status).toBe(404);
    expect((await fetch(`${app.url}/images/${inFlight}`)).status).toBe(200);
    expect((await fetch(`${app.url}/images/${image.fileName}`)).status).toBe(200);
    expect(await app.services.images.sweepOrphanFiles()).toBe(0);
  });
});
