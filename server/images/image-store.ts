import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ImageMimeType } from '../providers/images/types';

/*
 * What every store shares (the file names, the interface), apart from storage.ts, which
 * chooses a store and loads s3-storage.ts: so neither store's module imports the other.
 */

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
