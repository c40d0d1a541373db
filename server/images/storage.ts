import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ImageMimeType } from '../providers/images/types';
import { assertFileName, IMAGE_FILE_NAME, newFileName, type ImageStorage, type StoredFile } from './image-store';

export { assertFileName, IMAGE_FILE_NAME, mimeTypeOfFileName, newFileName } from './image-store';
export type { ImageStorage, StoredFile } from './image-store';

/** Files under one folder (DATA_DIR/images). */
export class LocalImageStorage implements ImageStorage {
  readonly kind = 'local';
  private ready: Promise<string | undefined> | undefined;

  constructor(readonly dir: string) {}

  async save(bytes: Buffer, mimeType: ImageMimeType): Promise<{ fileName: string; fileSize: number }> {
    this.ready ??= fs.mkdir(this.dir, { recursive: true });
    await this.ready;
    const fileName = newFileName(mimeType);
    // wx: never overwrite, however unlikely a repeated name is.
    await fs.writeFile(this.pathOf(fileName), bytes, { flag: 'wx' });
    // writeFile either writes every byte or throws, so the stored size is the buffer's.
    return { fileName, fileSize: bytes.length };
  }

  async remove(fileName: string): Promise<void> {
    await fs.rm(this.pathOf(fileName), { force: true });
  }

  async open(fileName: string): Promise<StoredFile | undefined> {
    const mimeType = assertFileName(fileName);
    const filePath = this.pathOf(fileName);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(filePath, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      // The stream owns the handle from here and closes it when done.
      return { body: createReadStream('', { fd: handle, autoClose: true }), size, mimeType };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async *list(): AsyncIterable<{ fileName: string; modifiedAt: Date }> {
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const fileName of names) {
      if (!IMAGE_FILE_NAME.test(fileName)) continue;
      try {
        const stat = await fs.stat(this.pathOf(fileName));
        yield { fileName, modifiedAt: stat.mtime };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  }

  async check(): Promise<void> {
    this.ready ??= fs.mkdir(this.dir, { recursive: true });
    await this.ready;
    await fs.access(this.dir, fs.constants.R_OK | fs.constants.W_OK);
  }

  /** The file's path; throws for a name that is not one of ours. */
  pathOf(fileName: string): string {
    assertFileName(fileName);
    return path.join(this.dir, fileName);
  }
}

/**
 * The store the configuration selects: a bucket when S3_BUCKET is set, else the folder.
 * The S3 client is loaded only then: a server on its local folder does not carry the AWS
 * SDK (about 20 MB of memory).
 */
export async function createImageStorage(config: {
  imagesDir: string;
  S3_BUCKET?: string;
  S3_ENDPOINT?: string;
  S3_REGION: string;
  S3_ACCESS_KEY_ID?: string;
  S3_SECRET_ACCESS_KEY?: string;
  S3_FORCE_PATH_STYLE: boolean;
  S3_TIMEOUT_MS: number;
}): Promise<ImageStorage> {
  if (!config.S3_BUCKET) return new LocalImageStorage(config.imagesDir);
  const { S3ImageStorage } = await import('./s3-storage');
  return S3ImageStorage.create({
    bucket: config.S3_BUCKET,
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    timeoutMs: config.S3_TIMEOUT_MS,
  });
}

/** A stored file's bytes, or undefined when there is no such file (whichever store). */
export async function readStoredFile(storage: ImageStorage, fileName: string): Promise<Buffer | undefined> {
  const file = await storage.open(fileName);
  if (!file) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of file.body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
