import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImagePage, ImageRecord } from '../../../src/domain/image-record';
import { images } from '../../../server/db/schema';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { expectLedgerConsistent, getJson, imagesOf, postJson, signedInUser, type TestUser } from './support';

async function page(app: TestApp, user: TestUser, query: string): Promise<ImagePage> {
  const reply = await getJson(app, user, `/api/images/my-images${query}`);
  expect(reply.status, query).toBe(200);
  return reply.body.data as ImagePage;
}

async function remove(app: TestApp, user: TestUser | undefined, id: number | string, origin?: string) {
  const headers: Record<string, string> = {};
  if (user) headers.cookie = user.jar.header();
  if (origin !== undefined) headers.origin = origin;
  const response = await fetch(`${app.url}/api/images/${id}`, { method: 'DELETE', headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Rows straight into the table: paging and search need many images, not many renders. */
async function seed(app: TestApp, user: TestUser, prompts: string[]): Promise<void> {
  const base = Date.parse('2026-01-01T00:00:00Z');
  await app.database.db.insert(images).values(
    prompts.map((prompt, i) => ({
      userId: user.id,
      fileName: `${i.toString(16).padStart(8, '0')}${user.id.toString(16).padStart(24, '0')}.png`,
      prompt,
      size: '1024x1024',
      fileSize: 1000,
      mimeType: 'image/png',
      createdAt: new Date(base + i * 1000),
      updatedAt: new Date(base + i * 1000),
    })),
  );
}

/** Every file the user's rows name is stored (other tests seed rows without files). */
async function expectFilesOf(app: TestApp, user: TestUser): Promise<void> {
  const stored = new Set(await fs.readdir(app.config.imagesDir));
  for (const row of await imagesOf(app, user)) {
    expect(stored.has(row.fileName)).toBe(true);
    expect(row.thumbnailFileName && stored.has(row.thumbnailFileName)).toBe(true);
  }
}

describe.each(testDatabases())('gallery on $name', (kind) => {
  let app: TestApp;
  let logins = 0;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(async () => {
    await app.close();
  });
  const newUser = () => signedInUser(app, `gallery-${kind.name}-${(logins += 1)}@example.com`);

  it('pages to the edges: the last partial page, past the end, and exact multiples', async () => {
    const user = await newUser();
    await seed(
      app,
      user,
      Array.from({ length: 25 }, (_, i) => `picture ${i}`),
    );
    const last = await page(app, user, '?page=3&limit=12');
    expect(last.images.map((i) => i.prompt)).toEqual(['picture 0']);
    expect(last.pagination).toEqual({ currentPage: 3, totalPages: 3, total: 25, hasNext: false, hasPrev: true });
    const beyond = await page(app, user, '?page=9&limit=12');
    expect(beyond.images).toEqual([]);
    expect(beyond.pagination).toMatchObject({ total: 25, totalPages: 3, hasNext: false });
    const exact = await page(app, user, '?page=5&limit=5');
    expect(exact.images.map((i) => i.prompt)).toEqual([
      'picture 4',
      'picture 3',
      'picture 2',
      'picture 1',
      'picture 0',
    ]);
    expect(exact.pagination).toMatchObject({ totalPages: 5, hasNext: false });
    const defaults = await page(app, user, '');
    expect(defaults.images).toHaveLength(12);
    expect(defaults.images[0]?.prompt).toBe('picture 24');
  });

  it('every page, read from either end, is the newest-first order; the total follows inserts and deletes', async () => {
    const user = await newUser();
    // 37 rows, some with the same timestamp so the id decides their order.
    const base = Date.parse('2026-02-01T00:00:00Z');
    await app.database.db.insert(images).values(
      Array.from({ length: 37 }, (_, i) => ({
        userId: user.id,
        fileName: `${(i + 0x100).toString(16).padStart(8, '0')}${user.id.toString(16).padStart(24, '0')}.png`,
        prompt: `shot ${i}`,
        size: '1024x1024',
        fileSize: 1000,
        mimeType: 'image/png',
        createdAt: new Date(base + Math.floor(i / 3) * 1000),
        updatedAt: new Date(base),
      })),
    );
    const expected = (await imagesOf(app, user))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id)
      .map((row) => row.prompt);
    for (const limit of [5, 6, 12]) {
      const seen: string[] = [];
      for (let p = 1; p <= Math.ceil(37 / limit); p += 1) {
        const reply = await page(app, user, `?page=${p}&limit=${limit}`);
        expect(reply.pagination.total).toBe(37);
        seen.push(...reply.images.map((i) => i.prompt));
      }
      expect(seen, `limit ${limit}`).toEqual(expected);
    }
    const newest = await page(app, user, '?page=1&limit=2');
    for (const image of newest.images) expect((await remove(app, user, image.id, app.url)).status).toBe(200);
    const after = await page(app, user, '?page=7&limit=5');
    expect(after.pagination.total).toBe(35);
    expect(after.images.map((i) => i.prompt)).toEqual(expected.slice(2).slice(30, 35));
  });

  it('searches the prompts of all pages case-insensitively, wildcards taken literally, only the own images', async () => {
    const anna = await newUser();
    const boris = await newUser();
    await seed(app, anna, [
      'A Red Fox in snow',
      'blue whale',
      'red panda',
      '100% cotton',
      'snake_case',
      'plain',
      ...Array.from({ length: 20 }, (_, i) => `filler ${i}`),
    ]);
    await seed(app, boris, ['red fox of boris']);

    const red = await page(app, anna, '?q=RED&limit=6');
    expect(red.images.map((i) => i.prompt)).toEqual(['red panda', 'A Red Fox in snow']);
    expect(red.pagination).toEqual({ currentPage: 1, totalPages: 1, total: 2, hasNext: false, hasPrev: false });
    expect((await page(app, anna, `?q=${encodeURIComponent('%')}`)).images.map((i) => i.prompt)).toEqual([
      '100% cotton',
    ]);
    expect((await page(app, anna, '?q=_')).images.map((i) => i.prompt)).toEqual(['snake_case']);
    expect((await page(app, anna, `?q=${encodeURIComponent('\\')}`)).images).toEqual([]);
    expect((await page(app, anna, '?q=nothing-like-it')).pagination).toMatchObject({ total: 0, totalPages: 0 });
    const fillers = await page(app, anna, '?q=filler&limit=6&page=2');
    expect(fillers.images.map((i) => i.prompt)).toEqual([
      'filler 13',
      'filler 12',
      'filler 11',
      'filler 10',
      'filler 9',
      'filler 8',
    ]);
    expect(fillers.pagination).toMatchObject({ total: 20, totalPages: 4, hasNext: true, hasPrev: true });
    // A blank search is no search.
    expect((await page(app, anna, '?q=%20%20')).pagination.total).toBe(26);
    const borisRed = await page(app, boris, '?q=red');
    expect(borisRed.images.map((i) => i.prompt)).toEqual(['red fox of boris']);
  });

  it.each([
    'page=0',
    'page=-1',
    'page=1.5',
    'page=x',
    'page=',
    'page=0x10',
    'page=1e3',
    'page=%2B5',
    'page=00001',
    'page=99999999999999999999',
    'page=1000001',
    'limit=0',
    'limit=-6',
    'limit=2.5',
    'limit=101',
    'limit=1e1',
    'limit=abc',
    'page=1&page=2',
    `q=${'a'.repeat(2001)}`,
    'q=a%00b',
    'q=a&q=b',
  ])('refuses %s with 400 and leaks nothing', async (query) => {
    const user = await newUser();
    const reply = await getJson(app, user, `/api/images/my-images?${query.slice(0, 200)}${query.slice(200)}`);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(reply.body).not.toHaveProperty('data');
  });

  it('accepts a search of exactly 2000 characters', async () => {
    const user = await newUser();
    expect((await page(app, user, `?q=${'ё'.repeat(2000)}`)).images).toEqual([]);
  });

  it('makes a WebP thumbnail of about 384 px for every generated image after the answer, and lists it', async () => {
    const user = await newUser();
    const made = await postJson(app, user, '/api/stability-ultra/generate', {
      prompt: 'a wide harbour',
      aspect_ratio: '16:9',
      negative_prompt: 'fog',
      seed: 7,
    });
    expect(made.status).toBe(200);
    const record = made.body.data as ImageRecord;
    expect(record).toMatchObject({ negativePrompt: 'fog', aspectRatio: '16:9', modelVariant: null, seed: 7 });
    await app.services.thumbnails.drain();
    const [row] = await imagesOf(app, user);
    expect(row?.thumbnailFileName).toMatch(/^[0-9a-f]{32}\.webp$/);
    const listed = await page(app, user, '');
    expect(listed.images[0]?.thumbnailUrl).toBe(`${app.url}/images/${row?.thumbnailFileName}`);
    // The answer does not wait for the thumbnail: until it is linked, the picture stands in.
    // (The job may have been read back after the thumbnail was linked: then it is the thumbnail.)
    expect([record.imageUrl, listed.images[0]?.thumbnailUrl]).toContain(record.thumbnailUrl);

    const thumbnail = await fetch(listed.images[0]?.thumbnailUrl ?? '');
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/webp');
    const meta = await sharp(Buffer.from(await thumbnail.arrayBuffer())).metadata();
    expect(meta.format).toBe('webp');
    expect(Math.max(meta.width, meta.height)).toBe(384);
    expect(meta.width).toBeGreaterThan(meta.height);
    await expectFilesOf(app, user);

    const sd3 = await postJson(app, user, '/api/stability-sd3/generate', {
      prompt: 'variant kept',
      aspect_ratio: '2:3',
      model: 'sd3.5-medium',
    });
    expect(sd3.body.data).toMatchObject({ modelVariant: 'sd3.5-medium', aspectRatio: '2:3', model: 'sd3' });
    const original = await postJson(app, user, '/api/stability/text-to-image', {
      prompt: 'size kept',
      width: 1152,
      height: 896,
    });
    expect(original.body.data).toMatchObject({ size: '1152x896', aspectRatio: null, width: 1152, height: 896 });
  });

  it('deletes for the owner only: the row, the file and the thumbnail; a stranger and a repeat get 404', async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const made = await postJson(app, owner, '/api/stability-core/generate', { prompt: 'to go', aspect_ratio: '1:1' });
    const kept = await postJson(app, owner, '/api/stability-core/generate', { prompt: 'to keep', aspect_ratio: '1:1' });
    await app.services.thumbnails.drain();
    const record = made.body.data as ImageRecord;
    const [row] = await imagesOf(app, owner);
    const files = [row?.fileName ?? '', row?.thumbnailFileName ?? ''];

    const foreign = await remove(app, stranger, record.id);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
    expect(await imagesOf(app, owner)).toHaveLength(2);
    for (const file of files) await fs.access(path.join(app.config.imagesDir, file));

    const crossSite = await remove(app, owner, record.id, 'https://evil.example');
    expect(crossSite.status).toBe(403);
    expect(await imagesOf(app, owner)).toHaveLength(2);
    expect((await remove(app, undefined, record.id)).status).toBe(401);

    const done = await remove(app, owner, record.id, app.url);
    expect(done).toEqual({ status: 200, body: { success: true, message: 'Image deleted' } });
    expect((await imagesOf(app, owner)).map((i) => i.prompt)).toEqual(['to keep']);
    for (const file of files) await expect(fs.access(path.join(app.config.imagesDir, file))).rejects.toThrow();
    expect((await fetch(record.imageUrl)).status).toBe(404);
    expect((await fetch(record.thumbnailUrl)).status).toBe(404);

    const again = await remove(app, owner, record.id, app.url);
    expect(again.status).toBe(404);
    expect((await page(app, owner, '')).images.map((i) => i.id)).toEqual([(kept.body.data as ImageRecord).id]);
    await expectFilesOf(app, owner);
    await expectLedgerConsistent(app, owner);
  });

  it('an image deleted while its thumbnail is being made leaves no file behind', async () => {
    const owner = await newUser();
    await app.services.thumbnails.drain();
    const before = new Set(await fs.readdir(app.config.imagesDir));
    const made = await postJson(app, owner, '/api/stability-core/generate', { prompt: 'brief', aspect_ratio: '1:1' });
    expect(made.status).toBe(200);
    expect((await remove(app, owner, (made.body.data as ImageRecord).id, app.url)).status).toBe(200);
    await app.services.thumbnails.drain();
    const after = await fs.readdir(app.config.imagesDir);
    // Whichever came first, the thumbnail's link or the delete, neither file is left.
    expect(after.filter((file) => !before.has(file))).toEqual([]);
    expect(await imagesOf(app, owner)).toEqual([]);
  });

  it.each(['abc', '1.5', '-1', '0', '0x1', '1e3', '01', '99999999999999999999'])(
    'refuses the image id %s with 400, deleting nothing',
    async (id) => {
      const user = await newUser();
      await seed(app, user, ['safe']);
      const reply = await remove(app, user, id, app.url);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
      expect(await imagesOf(app, user)).toHaveLength(1);
    },
  );

  it('answers 404 for an id beyond any image', async () => {
    const user = await newUser();
    expect((await remove(app, user, '2147483647', app.url)).status).toBe(404);
    expect((await remove(app, user, '2147483648', app.url)).status).toBe(400);
  });
});

describe.each(testDatabases())('the thumbnail job on $name', (kind) => {
  it('gives images stored without a thumbnail theirs, once', async () => {
    const app = await startTestApp(kind);
    try {
      const user = await signedInUser(app, `thumbs-${kind.name}@example.com`);
      await postJson(app, user, '/api/stability-core/generate', { prompt: 'old image', aspect_ratio: '16:9' });
      await app.services.thumbnails.drain();
      const [row] = await imagesOf(app, user);
      // As if stored before thumbnails existed.
      await fs.rm(path.join(app.config.imagesDir, row?.thumbnailFileName ?? ''));
      await app.database.db.update(images).set({ thumbnailFileName: null });
      const before = (await page(app, user, '')).images[0];
      expect(before?.thumbnailUrl).toBe(before?.imageUrl);

      const read = (fileName: string) => fs.readFile(path.join(app.config.imagesDir, fileName));
      expect(await app.services.thumbnails.backfill(read)).toBe(1);
      expect(await app.services.thumbnails.backfill(read)).toBe(0);
      const after = (await page(app, user, '')).images[0];
      expect(after?.thumbnailUrl).toMatch(/\.webp$/);
      const meta = await sharp(Buffer.from(await (await fetch(after?.thumbnailUrl ?? '')).arrayBuffer())).metadata();
      expect(meta.width).toBe(384);
      await expectFilesOf(app, user);
    } finally {
      await app.close();
    }
  });
});
