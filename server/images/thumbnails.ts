import sharp from 'sharp';
import { THUMBNAIL_LONG_EDGE } from '../../src/domain/image-record';
import type { Db } from '../db/client';
import type { ImageMimeType } from '../providers/images/types';
import * as repo from './repository';
const THUMBNAIL_QUALITY = 72;
/**
 * libwebp's effort 2 of 6: a thumbnail is made for every stored image; effort 2 encodes a
 * 384 px one a third faster than the default 4 for about 6% more bytes (a page of 48 stays
 * far under the gallery's 1.5 MB).
 */
const THUMBNAIL_EFFORT = 2;

/** What a thumbnail needs from the store: the two methods every store implementation has. */
export interface ThumbnailStore {
  save(bytes: Buffer, mimeType: ImageMimeType): Promise<{ fileName: string; fileSize: number }>;
  remove(fileName: string): Promise<void>;
}

export interface StoredThumbnail {
  fileName: string;
  width: number;
  height: number;
}

/**
 * Encodes a WebP thumbnail of an image (long edge THUMBNAIL_LONG_EDGE, never enlarged) and
 * stores it; the caller links it to the image row (or removes it).
 */
export async function storeThumbnail(store: ThumbnailStore, bytes: Buffer): Promise<StoredThumbnail> {
  const { data, info } = await sharp(bytes, { limitInputPixels: 64 * 1024 * 1024 })
    .rotate()
    .resize({ width: THUMBNAIL_LONG_EDGE, height: THUMBNAIL_LONG_EDGE, fit: 'inside', withoutEnlargement: true })
    .webp({ quality: THUMBNAIL_QUALITY, effort: THUMBNAIL_EFFORT })
    .toBuffer({ resolveWithObject: true });
  const stored = await store.save(data, 'image/webp');
  return { fileName: stored.fileName, width: info.width, height: info.height };
}

/**
 * The list thumbnails of stored images, made after the answer: decoding a 1024 px picture
 * and encoding its thumbnail costs more than the rest of a generation's own work
 * (docs/benchmarks.md, generation),
 * and the person waiting is shown the full picture anyway. Until its thumbnail is linked,
 * an image's thumbnailUrl is the picture itself (ImageService.toRecord), so a thumbnail
 * that is never made (a crash, an unreadable store) costs only bytes; `npm run thumbnails`
 * makes any that are missing.
 */
export class Thumbnails {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly store: ThumbnailStore,
    /** Where a thumbnail that could not be made is reported. */
    private readonly log: (error: unknown, imageId: number) => void = () => {},
  ) {}

  /** Makes the thumbnail of a stored image in the background. */
  add(imageId: number, bytes: Buffer): void {
    const task: Promise<void> = this.make(imageId, bytes)
      .then(() => undefined)
      .catch((error: unknown) => this.log(error, imageId))
      .finally(() => this.pending.delete(task));
    this.pending.add(task);
  }

  /**
   * Makes and links the thumbnail of an image now. False when the image was deleted or got
   * one meanwhile: this one is removed again. A thumbnail stored but never linked (the
   * database failed) is left to the orphan sweep.
   */
  async make(imageId: number, bytes: Buffer): Promise<boolean> {
    const thumbnail = await storeThumbnail(this.store, bytes);
    if (await repo.setThumbnail(this.db, imageId, thumbnail.fileName)) return true;
    await this.store.remove(thumbnail.fileName);
    return false;
  }

  /**
   * The one-off job for images stored without a thumbnail (before thumbnails existed, or
   * whose thumbnail was never made): `npm run thumbnails`, `read` giving an image's bytes.
   * Returns how many were made.
   */
  async backfill(read: (fileName: string) => Promise<Buffer>, batch = 100): Promise<number> {
    let made = 0;
    let afterId = 0;
    for (;;) {
      const rows = await repo.imagesWithoutThumbnail(this.db, afterId, batch);
      if (rows.length === 0) return made;
      for (const row of rows) {
        afterId = row.id;
        if (await this.make(row.id, await read(row.fileName))) made += 1;
      }
    }
  }

  /** Resolves when every thumbnail asked for so far is made (or failed): at shutdown, and in tests. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
