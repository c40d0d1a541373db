import os from 'node:os';
import sharp, { type Metadata } from 'sharp';
import {
  fileTooLargeMessage,
  megabytes,
  portraitMessages,
  UPLOAD_MAX_BYTES,
  UPLOAD_MAX_MB,
  UPLOAD_MAX_MEGAPIXELS,
  UPLOAD_MAX_PIXELS,
  UPLOAD_MIN_EDGE,
} from '../../src/domain/portraits';
import { AppError } from '../errors';
import type { SpooledFile } from './spool';

/**
 * Safe decoding of an uploaded photo, before anything else sees it:
 *
 * - the size is checked against the limit (SPEC: 10MB);
 * - the type is decided by the file's first bytes (JPEG, PNG, WebP), never by its name or
 *   declared type, so SVG, GIF, text and the rest are refused;
 * - the header is read first, so a decompression bomb (30000x30000) is refused before a
 *   pixel is decoded, and libvips itself is capped by `limitInputPixels`;
 * - animated images (more than one page) and pictures too small to hold a face are refused;
 * - the picture is decoded with `failOn: 'truncated'`, turned upright by its EXIF
 *   orientation, scaled down to at most {@link DECODED_MAX_EDGE} px, and re-encoded as
 *   JPEG with no metadata at all (no EXIF, GPS, XMP or ICC comments survive).
 *
 * Every refusal is an AppError with a code and `details` carrying the values of its text.
 *
 * Decoding a phone photo takes tens of megabytes and all of a core for a few hundred
 * milliseconds, so at most one decode per core runs at once; the others wait their turn
 * holding only their compressed bytes. Ten simultaneous 8 MB uploads then cost the memory
 * of two decodes, not ten, and take no longer in total.
 */

export type SniffedImageType = 'image/jpeg' | 'image/png' | 'image/webp';

/** Photos larger than this are scaled down: no identity model needs more, and it keeps memory low. */
export const DECODED_MAX_EDGE = 2048;
const DECODED_QUALITY = 90;

export interface DecodedPhoto {
  /** Re-encoded JPEG, metadata stripped. */
  bytes: Buffer;
  mimeType: 'image/jpeg';
  width: number;
  height: number;
  /** What the bytes said the upload was. */
  sourceType: SniffedImageType;
}

/** The type the first bytes announce, or undefined for anything but JPEG, PNG and WebP. */
export function sniffImageType(bytes: Buffer): SniffedImageType | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length >= png.length && png.every((byte, i) => bytes[i] === byte)) return 'image/png';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') {
    return 'image/webp';
  }
  return undefined;
}

const SHARP_FORMAT: Record<SniffedImageType, string> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/webp': 'webp',
};

export function fileTooLarge(bytes: number): AppError {
  return new AppError('UPLOAD_TOO_LARGE', fileTooLargeMessage(bytes), {
    details: { sizeMb: megabytes(bytes), maxMb: UPLOAD_MAX_MB },
  });
}

function unreadable(reason: string, cause?: unknown): AppError {
  return new AppError('UPLOAD_UNREADABLE', portraitMessages.unreadable, { cause, details: { reason } });
}

function unsupported(): AppError {
  return new AppError('UPLOAD_UNSUPPORTED_TYPE', portraitMessages.unsupportedType, {
    details: { allowed: ['JPG', 'PNG', 'WebP'] },
  });
}

/** The cheap checks of the raw bytes: emptiness, size and type. */
export function checkUploadBytes(bytes: Buffer, byteLength = bytes.length): SniffedImageType {
  if (byteLength === 0) throw unreadable('empty');
  if (byteLength > UPLOAD_MAX_BYTES) throw fileTooLarge(byteLength);
  const type = sniffImageType(bytes);
  if (!type) throw unsupported();
  return type;
}

/** Runs at most `slots` tasks at once, the rest in arrival order. */
export function limiter(slots: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    else running += 1;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}

const decodeSlot = limiter(Math.max(1, os.availableParallelism()));

/**
 * Decodes, checks and re-encodes an uploaded photo (see the module's comment): its bytes,
 * or an upload spooled to a temporary file (server/uploads/spool.ts), which libvips then
 * reads itself.
 */
export function decodeUpload(source: Buffer | SpooledFile): Promise<DecodedPhoto> {
  return decodeSlot(() => decode(source));
}

async function decode(source: Buffer | SpooledFile): Promise<DecodedPhoto> {
  const input = Buffer.isBuffer(source) ? source : source.path;
  const sourceType = Buffer.isBuffer(source) ? checkUploadBytes(source) : checkUploadBytes(source.head, source.size);
  const options = { limitInputPixels: UPLOAD_MAX_PIXELS, failOn: 'truncated' as const, pages: 1 };

  let metadata: Metadata;
  try {
    // Reads the header only: the pixel count is known before anything is decoded.
    metadata = await sharp(input, { ...options, limitInputPixels: false }).metadata();
  } catch (error) {
    throw unreadable('header', error);
  }
  if (metadata.format !== SHARP_FORMAT[sourceType]) throw unsupported();
  const { width, height } = metadata;
  if (!width || !height) throw unreadable('dimensions');
  if (width * height > UPLOAD_MAX_PIXELS) {
    throw new AppError('UPLOAD_TOO_MANY_PIXELS', portraitMessages.tooManyPixels, {
      details: { width, height, maxMegapixels: UPLOAD_MAX_MEGAPIXELS },
    });
  }
  if ((metadata.pages ?? 1) > 1) {
    throw new AppError('UPLOAD_ANIMATED', portraitMessages.animated, { details: { pages: metadata.pages } });
  }
  // EXIF orientations 5 to 8 swap the sides; the short edge is the same either way.
  if (Math.min(width, height) < UPLOAD_MIN_EDGE) {
    throw new AppError('UPLOAD_TOO_SMALL', portraitMessages.tooSmall, {
      details: { width, height, minEdge: UPLOAD_MIN_EDGE },
    });
  }

  try {
    const { data, info } = await sharp(input, { ...options, sequentialRead: true })
      .rotate()
      .resize({ width: DECODED_MAX_EDGE, height: DECODED_MAX_EDGE, fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: DECODED_QUALITY, mozjpeg: false })
      .toBuffer({ resolveWithObject: true });
    return { bytes: data, mimeType: 'image/jpeg', width: info.width, height: info.height, sourceType };
  } catch (error) {
    throw unreadable('pixels', error);
  }
}
