import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ImageStorage } from '../../../server/images/s3-storage';
import { IMAGE_FILE_NAME, LocalImageStorage, type ImageStorage } from '../../../server/images/storage';
import type { ImageRecord } from '../../../src/domain/image-record';
import { IMAGE_MODELS } from '../../../src/domain/images';
import type { ImageMimeType } from '../../../server/providers/images/types';
import { S3_TEST_KEYS, startS3Server, type S3TestServer } from '../../support/s3-server';
import { pglite, startTestApp, type TestApp } from '../helpers';
import { balance, expectLedgerConsistent, getJson, postJson, signedInUser, type TestUser } from './support';

/**
 * One contract, both stores: the local folder and an S3 bucket (a real S3-protocol
 * server on loopback, in its own process). Features code against the interface only.
 */
const stores: { name: string; open(): Promise<{ storage: ImageStorage; close(): Promise<void> }> }[] = [
  {
    name: 'local folder',
    async open() {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'storage-contract-'));
      return {
        storage: new LocalImageStorage(path.join(dir, 'images')),
        close: () => fs.rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'S3 bucket',
    async open() {
      const server = await startS3Server('contract');
      const storage = await S3ImageStorage.create({
        bucket: server.bucket,
        endpoint: server.endpoint,
        region: 'us-east-1',
        ...S3_TEST_KEYS,
        forcePathStyle: true,
      });
      return {
        storage,
        close: async () => {
          storage.close();
          await server.stop();
        },
      };
    },
  },
];

async function collect(storage: ImageStorage): Promise<{ fileName: string; modifiedAt: Date }[]> {
  const files: { fileName: string; modifiedAt: Date }[] = [];
  for await (const file of storage.list()) files.push(file);
  return files;
}

describe.each(stores)('image storage contract: $name', (store) => {
  let storage: ImageStorage;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const opened = await store.open();
    storage = opened.storage;
    close = () => opened.close();
  });
  afterAll(async () => close());

  it('answers the readiness check', async () => {
    await expect(storage.check()).resolves.toBeUndefined();
  });

  it('saves under a fresh random name per type, and opens the same bytes with size and type', async () => {
    const png = await storage.save(Buffer.from('png bytes'), 'image/png');
    const jpg = await storage.save(Buffer.from('jpeg bytes!'), 'image/jpeg');
    const webp = await storage.save(Buffer.from('webp'), 'image/webp');
    expect(png.fileName).toMatch(/^[0-9a-f]{32}\.png$/);
    expect(jpg.fileName).toMatch(/^[0-9a-f]{32}\.jpg$/);
    expect(webp.fileName).toMatch(/^[0-9a-f]{32}\.webp$/);
    expect([png.fileSize, jpg.fileSize, webp.fileSize]).toEqual([9, 11, 4]);
    const again = await storage.save(Buffer.from('png bytes'), 'image/png');
    expect(again.fileName).not.toBe(png.fileName);

    const opened = await storage.open(jpg.fileName);
    expect(opened).toMatchObject({ size: 11, mimeType: 'image/jpeg' });
    expect(await text(opened!.body)).toBe('jpeg bytes!');
  });

  it('opens nothing for a missing file, and refuses a name that is not one of ours', async () => {
    await expect(storage.open(`${'0'.repeat(32)}.png`)).resolves.toBeUndefined();
    await expect(storage.open('../etc/passwd')).rejects.toThrow(/not an image file name/);
    await expect(storage.remove('x/../../y.png')).rejects.toThrow(/not an image file name/);
  });

  it('lists what it stores, and removes a file (twice is no error)', async () => {
    const saved = await storage.save(Buffer.alloc(100, 7), 'image/png');
    const before = await collect(storage);
    const entry = before.find((file) => file.fileName === saved.fileName);
    expect(entry).toBeDefined();
    expect(Math.abs(entry!.modifiedAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(before.every((file) => IMAGE_FILE_NAME.test(file.fileName))).toBe(true);

    await storage.remove(saved.fileName);
    await storage.remove(saved.fileName);
    await expect(storage.open(saved.fileName)).resolves.toBeUndefined();
    expect((await collect(storage)).map((file) => file.fileName)).not.toContain(saved.fileName);
  });
});

describe('S3 bucket faults', () => {
  let server: S3TestServer;
  beforeAll(async () => {
    server = await startS3Server('faults');
  });
  afterAll(async () => server.stop());

  it('fails the readiness check and the write with wrong keys, a missing bucket, or no server', async () => {
    const options = { endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true, timeoutMs: 3000 };
    const wrongKeys = await S3ImageStorage.create({
      ...options,
      bucket: server.bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'wrong',
    });
    await expect(wrongKeys.check()).rejects.toThrow();
    await expect(wrongKeys.save(Buffer.from('x'), 'image/png')).rejects.toThrow(/signature/i);
    const noBucket = await S3ImageStorage.create({ ...options, bucket: 'no-such-bucket', ...S3_TEST_KEYS });
    await expect(noBucket.check()).rejects.toThrow();
    await expect(noBucket.save(Buffer.from('x'), 'image/png')).rejects.toThrow();
    const stopped = await startS3Server('gone');
    await stopped.stop();
    const noServer = await S3ImageStorage.create({
      ...options,
      endpoint: stopped.endpoint,
      bucket: 'gone',
      ...S3_TEST_KEYS,
    });
    await expect(noServer.check()).rejects.toThrow();
    await expect(noServer.save(Buffer.from('x'), 'image/png')).rejects.toThrow();
  });
});

/** A local folder that refuses to write one type of file: the picture or its WebP thumbnail. */
class RefusingStorage extends LocalImageStorage {
  constructor(
    dir: string,
    private readonly refused: ImageMimeType,
  ) {
    super(dir);
  }

  override async save(bytes: Buffer, mimeType: ImageMimeType) {
    if (mimeType === this.refused) throw new Error(`the store refuses ${mimeType}`);
    return super.save(bytes, mimeType);
  }
}

describe('a generation whose picture or thumbnail cannot be stored', () => {
  const withRefusingStore = async (
    refused: ImageMimeType,
    test: (app: TestApp, user: TestUser, dir: string) => Promise<void>,
  ) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'refusing-store-'));
    const app = await startTestApp(pglite, {}, {}, { storage: new RefusingStorage(dir, refused) });
    try {
      await test(app, await signedInUser(app, `refused-${refused.replace('/', '-')}@example.com`), dir);
    } finally {
      await app.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  };

  it('refunds and leaves no file behind when the store refuses the picture', async () => {
    await withRefusingStore('image/png', async (app, user, dir) => {
      const before = await balance(app, user);
      const reply = await postJson(app, user, IMAGE_MODELS.core.endpoint, {
        prompt: 'a lighthouse',
        aspect_ratio: '1:1',
      });
      expect(reply.status).toBe(503);
      expect(reply.body).toMatchObject({ success: false, code: 'STORAGE_UNAVAILABLE' });
      expect(await balance(app, user)).toBe(before);
      await expectLedgerConsistent(app, user);
      await app.services.thumbnails.drain();
      expect(await fs.readdir(dir)).toEqual([]);
    });
  });

  it('keeps the paid picture when only its thumbnail cannot be stored: the picture stands in for it', async () => {
    await withRefusingStore('image/webp', async (app, user, dir) => {
      const before = await balance(app, user);
      const reply = await postJson(app, user, IMAGE_MODELS.core.endpoint, {
        prompt: 'a lighthouse',
        aspect_ratio: '1:1',
      });
      expect(reply.status).toBe(200);
      const record = reply.body.data as ImageRecord;
      await app.services.thumbnails.drain();
      expect(await balance(app, user)).toBe(before - IMAGE_MODELS.core.cost);
      await expectLedgerConsistent(app, user);
      expect(await fs.readdir(dir)).toEqual([path.basename(record.imageUrl)]);
      const listed = (await getJson(app, user, '/api/images/my-images?page=1&limit=12')).body.data as {
        images: ImageRecord[];
      };
      expect(listed.images.map((image) => image.thumbnailUrl)).toEqual([record.imageUrl]);
    });
  });
});
