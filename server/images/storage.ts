import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { ImageMimeType } from '../providers/images/types';

/**
 * Names are 128 random bits in hex plus the extension: unguessable, and the only shape
 * /images/{fileName} accepts, so a request can never name anything outside the store.
 * Images, thumbnails (WebP) and portraits share the scheme.
 */
export const IMAGE_FILE_NAME = /^[0-9a-f]{32}\.(png|jpg|webp)$/;

const EXTENSIONS: Record<ImageMimeType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
};

const MIME_OF_EXTENSION: Record<string, ImageMimeType> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
};

export function mimeTypeOfFileName(fileName: string): ImageMimeType | undefined {
  const match = IMAGE_FILE_NAME.exec(fileName);
  return match?.[1] ? MIME_OF_EXTENSION[match[1]] : undefined;
}

export function newFileName(mimeType: ImageMimeType): string {
  return `${randomBytes(16).toString('hex')}.${EXTENSIONS[mimeType]}`;
}

export function assertFileName(fileName: string): ImageMimeType {
  const mimeType = mimeTypeOfFileName(fileName);
  if (!mimeType) throw new Error(`not an image file name: ${fileName}`);
  return mimeType;
}

export interface StoredFile {
  body: Readable;
  size: number;
  mimeType: ImageMimeType;
}

/**
 * Where image files live: the local folder (one machine) or an S3-compatible bucket
 * (several). Every feature that stores files (generations, thumbnails, portraits) goes
 * through this interface only.
 */
export interface ImageStorage {
  readonly kind: 'local' | 's3';
  /** Writes the bytes under a fresh random name; returns the name and the stored size. */
  save(bytes: Buffer, mimeType: ImageMimeType): Promise<{ fileName: string; fileSize: number }>;
  /** Removes the file; a missing one is not an error. */
  remove(fileName: string): Promise<void>;
  /** The file for serving, or undefined when there is no such file. */
  open(fileName: string): Promise<StoredFile | undefined>;
  /** Every stored file (for sweeping files no row refers to). */
  list(): AsyncIterable<{ fileName: string; modifiedAt: Date }>;
  /** Throws unless the store answers (the readiness check). */
  check(): Promise<void>;
}

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
