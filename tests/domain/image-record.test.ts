import { describe, expect, it } from 'vitest';
import {
  DASHBOARD_PREVIEW_LIMIT,
  GALLERY_PAGE_SIZES,
  GENERATION_SUCCESS_MESSAGE,
  IMAGE_PAGE_DEFAULT_LIMIT,
  IMAGE_SEARCH_MAX_LENGTH,
  THUMBNAIL_LONG_EDGE,
  generationReplySchema,
  imagePageSchema,
  imageRecordSchema,
  paginationOf,
  paginationSchema,
  thumbnailSize,
} from '../../src/domain/image-record';

// SPEC section 3 "Image": id (number), fileName, originalName (nullable), imageUrl,
// prompt, width, height, steps, cfgScale, stylePreset (all nullable), size, fileSize
// (number, bytes), mimeType, userId, createdAt, updatedAt, seed (nullable number), model
// (nullable), finish_reason (nullable); plus the parameters Regenerate needs and the
// list thumbnail (docs/screens.md, the gallery: Regenerate with every parameter, WebP thumbnails).
const image = {
  id: 7,
  fileName: 'a1b2.png',
  originalName: null,
  imageUrl: 'https://api.example.com/images/a1b2.png',
  prompt: 'a red cat',
  width: 1024,
  height: 1024,
  steps: 30,
  cfgScale: 7.5,
  stylePreset: 'photographic',
  size: '1024x1024',
  fileSize: 524288,
  mimeType: 'image/png',
  userId: 3,
  createdAt: '2026-01-02T10:00:00.000Z',
  updatedAt: '2026-01-02T10:00:00.000Z',
  seed: 4294967295,
  model: 'original',
  finish_reason: 'SUCCESS',
  negativePrompt: 'blur',
  aspectRatio: null,
  modelVariant: null,
  thumbnailUrl: 'https://api.example.com/images/a1b2.thumb.webp',
};
const nullable = [
  'originalName',
  'width',
  'height',
  'steps',
  'cfgScale',
  'stylePreset',
  'seed',
  'model',
  'finish_reason',
  'negativePrompt',
  'aspectRatio',
  'modelVariant',
] as const;

describe('image record (SPEC section 3 "Image")', () => {
  it('reads every field as sent', () => {
    expect(imageRecordSchema.parse(image)).toEqual(image);
  });

  it('takes null for the nullable fields', () => {
    const allNull = { ...image, ...Object.fromEntries(nullable.map((field) => [field, null])) };
    expect(imageRecordSchema.parse(allNull)).toEqual(allNull);
  });

  it.each(Object.keys(image))('refuses a record without %s', (field) => {
    const record: Record<string, unknown> = { ...image };
    delete record[field];
    expect(imageRecordSchema.safeParse(record).success).toBe(false);
  });

  it.each(Object.keys(image).filter((field) => !(nullable as readonly string[]).includes(field)))(
    'refuses null for %s, which SPEC does not make nullable',
    (field) => {
      expect(imageRecordSchema.safeParse({ ...image, [field]: null }).success).toBe(false);
    },
  );

  it('wants whole numbers where SPEC counts (id, sizes, bytes, seed) and allows a fractional cfgScale', () => {
    for (const field of ['id', 'width', 'height', 'steps', 'fileSize', 'userId', 'seed']) {
      expect(imageRecordSchema.safeParse({ ...image, [field]: 1.5 }).success).toBe(false);
    }
    expect(imageRecordSchema.safeParse({ ...image, cfgScale: 7.5 }).success).toBe(true);
    expect(imageRecordSchema.safeParse({ ...image, id: '7' }).success).toBe(false);
  });
});

describe('generation reply (SPEC section 7: success, data, tokens.charged, message)', () => {
  const reply = { success: true, data: image, tokens: { charged: 2 }, message: GENERATION_SUCCESS_MESSAGE };

  it('reads a success with the image and the tokens charged', () => {
    expect(generationReplySchema.parse(reply)).toEqual(reply);
    expect(generationReplySchema.parse({ ...reply, balanceAfter: 0 })).toEqual({ ...reply, balanceAfter: 0 });
    expect(GENERATION_SUCCESS_MESSAGE).toBe('Image generated successfully');
  });

  it('refuses a failure, a missing charge, a fractional charge and a negative balance', () => {
    expect(generationReplySchema.safeParse({ ...reply, success: false }).success).toBe(false);
    expect(generationReplySchema.safeParse({ ...reply, tokens: {} }).success).toBe(false);
    expect(generationReplySchema.safeParse({ ...reply, tokens: { charged: 1.5 } }).success).toBe(false);
    expect(generationReplySchema.safeParse({ ...reply, balanceAfter: -1 }).success).toBe(false);
    expect(generationReplySchema.safeParse({ ...reply, data: undefined }).success).toBe(false);
    expect(generationReplySchema.safeParse({ ...reply, message: undefined }).success).toBe(false);
  });
});

describe('image page (SPEC section 7: data.images, data.pagination)', () => {
  const pagination = { currentPage: 2, totalPages: 3, total: 30, hasNext: true, hasPrev: true };

  it('reads the images and the five pagination fields of SPEC section 3', () => {
    const page = { images: [image], pagination };
    expect(imagePageSchema.parse(page)).toEqual(page);
    expect(paginationSchema.parse(pagination)).toEqual(pagination);
    for (const field of Object.keys(pagination)) {
      const partial: Record<string, unknown> = { ...pagination };
      delete partial[field];
      expect(paginationSchema.safeParse(partial).success).toBe(false);
    }
    expect(imagePageSchema.safeParse({ images: [image] }).success).toBe(false);
    expect(imagePageSchema.safeParse({ pagination }).success).toBe(false);
  });

  it('counts pages from the total and the page size', () => {
    expect(paginationOf(1, 12, 0)).toEqual({ currentPage: 1, totalPages: 0, total: 0, hasNext: false, hasPrev: false });
    expect(paginationOf(1, 12, 12)).toEqual({
      currentPage: 1,
      totalPages: 1,
      total: 12,
      hasNext: false,
      hasPrev: false,
    });
    expect(paginationOf(1, 12, 13)).toEqual({
      currentPage: 1,
      totalPages: 2,
      total: 13,
      hasNext: true,
      hasPrev: false,
    });
    expect(paginationOf(2, 12, 13)).toEqual({
      currentPage: 2,
      totalPages: 2,
      total: 13,
      hasNext: false,
      hasPrev: true,
    });
    expect(paginationOf(2, 6, 30)).toEqual({ currentPage: 2, totalPages: 5, total: 30, hasNext: true, hasPrev: true });
  });

  it('uses SPEC section 9 sizes: gallery 6, 12, 24, 48 (default 12), dashboard preview 6, search as long as a prompt', () => {
    expect(GALLERY_PAGE_SIZES).toEqual([6, 12, 24, 48]);
    expect(IMAGE_PAGE_DEFAULT_LIMIT).toBe(12);
    expect(DASHBOARD_PREVIEW_LIMIT).toBe(6);
    expect(IMAGE_SEARCH_MAX_LENGTH).toBe(2000);
  });
});

describe('thumbnailSize', () => {
  it('shrinks the long edge to the thumbnail edge and keeps the shape', () => {
    expect(thumbnailSize(1024, 1024)).toEqual({ width: THUMBNAIL_LONG_EDGE, height: THUMBNAIL_LONG_EDGE });
    expect(thumbnailSize(1536, 640)).toEqual({
      width: THUMBNAIL_LONG_EDGE,
      height: Math.round((640 * THUMBNAIL_LONG_EDGE) / 1536),
    });
    expect(thumbnailSize(640, 1536)).toEqual({
      width: Math.round((640 * THUMBNAIL_LONG_EDGE) / 1536),
      height: THUMBNAIL_LONG_EDGE,
    });
  });

  it('never enlarges a small picture', () => {
    expect(thumbnailSize(200, 100)).toEqual({ width: 200, height: 100 });
    expect(thumbnailSize(THUMBNAIL_LONG_EDGE, 10)).toEqual({ width: THUMBNAIL_LONG_EDGE, height: 10 });
  });

  it('keeps at least one pixel on a very thin picture', () => {
    expect(thumbnailSize(100000, 1)).toEqual({ width: THUMBNAIL_LONG_EDGE, height: 1 });
    expect(thumbnailSize(1, 100000)).toEqual({ width: 1, height: THUMBNAIL_LONG_EDGE });
  });

  it('gives a square when the size is not known', () => {
    const square = { width: THUMBNAIL_LONG_EDGE, height: THUMBNAIL_LONG_EDGE };
    expect(thumbnailSize(null, 512)).toEqual(square);
    expect(thumbnailSize(512, null)).toEqual(square);
    expect(thumbnailSize(0, 0)).toEqual(square);
  });
});
