import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ImageMimeType } from '../providers/images/types';

/**
 * Generated images on the local disk under DATA_DIR/images. Names are 128 random bits in
 * hex plus the extension: unguessable, and the only shape /images/{fileName} accepts, so
 * a request can never name a path outside the directory.
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

export class ImageStorage {
  private ready: Promise<string | undefined> | undefined;

  constructor(readonly dir: string) {}

  /** Writes the bytes under a fresh random name; returns the name and the stored size. */
  async save(bytes: Buffer, mimeType: ImageMimeType): Promise<{ fileName: string; fileSize: number }> {
    this.ready ??= fs.mkdir(this.dir, { recursive: true });
    await this.ready;
    const fileName = `${randomBytes(16).toString('hex')}.${EXTENSIONS[mimeType]}`;
    const filePath = this.pathOf(fileName);
    // wx: never overwrite, however unlikely a repeated name is.
    await fs.writeFile(filePath, bytes, { flag: 'wx' });
    // writeFile either writes every byte or throws, so the stored size is the buffer's.
    return { fileName, fileSize: bytes.length };
  }

  async remove(fileName: string): Promise<void> {
    await fs.rm(this.pathOf(fileName), { force: true });
  }

  /** The file's path; throws for a name that is not one of ours. */
  pathOf(fileName: string): string {
    if (!IMAGE_FILE_NAME.test(fileName)) throw new Error(`not an image file name: ${fileName}`);
    return path.join(this.dir, fileName);
  }
}
