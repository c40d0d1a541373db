import { describe, expect, it } from 'vitest';
import {
  GALLERY_MAX_PAGE,
  GALLERY_PAGE_SIZES,
  gallerySearchOf,
  isGalleryPageSize,
} from '../../src/domain/gallery-search';
import { IMAGE_PAGE_DEFAULT_LIMIT } from '../../src/domain/image-record';

/** SPEC sections 2 and 9: page sizes 6, 12, 24, 48, default 12. */
describe('gallery page sizes', () => {
  it('are 6, 12, 24 and 48, with 12 the default', () => {
    expect(GALLERY_PAGE_SIZES).toEqual([6, 12, 24, 48]);
    expect(IMAGE_PAGE_DEFAULT_LIMIT).toBe(12);
  });

  it('accepts only the offered sizes', () => {
    for (const size of [6, 12, 24, 48]) expect(isGalleryPageSize(size)).toBe(true);
    for (const size of [0, 5, 10, 25, 100]) expect(isGalleryPageSize(size)).toBe(false);
  });
});

describe('gallerySearchOf (the gallery address)', () => {
  it('keeps an offered page size and a whole page number', () => {
    expect(gallerySearchOf({ page: '3', limit: '24' })).toEqual({ page: 3, limit: 24 });
    expect(gallerySearchOf({ page: 2, limit: 48 })).toEqual({ page: 2, limit: 48 });
  });

  it('drops a size that is not offered, so the default applies', () => {
    expect(gallerySearchOf({ limit: '10' })).toEqual({});
    expect(gallerySearchOf({ limit: '1000' })).toEqual({});
  });

  it('drops a page that is not a whole number from 1', () => {
    for (const page of ['0', '-1', '1.5', 'abc', '', ' 2', null]) expect(gallerySearchOf({ page })).toEqual({});
  });
});

describe('gallerySearchOf limits', () => {
  it('keeps a page up to GALLERY_MAX_PAGE and drops one beyond', () => {
    expect(gallerySearchOf({ page: String(GALLERY_MAX_PAGE) })).toEqual({ page: GALLERY_MAX_PAGE });
    expect(gallerySearchOf({ page: String(GALLERY_MAX_PAGE + 1) })).toEqual({});
    expect(gallerySearchOf({ page: GALLERY_MAX_PAGE + 1 })).toEqual({});
  });

  it('drops a repeated page or size (an array), which is not one whole number', () => {
    expect(gallerySearchOf({ page: ['3'], limit: ['24'] })).toEqual({});
    expect(gallerySearchOf({ page: { n: 3 } })).toEqual({});
  });
});
