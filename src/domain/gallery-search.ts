/**
 * The gallery's page and page size as the address holds them. Kept apart from the
 * request schemas (gallery.ts, image-record.ts) so the router reads the address without
 * loading a schema library.
 */

/** SPEC section 9: the gallery's page sizes. */
export const GALLERY_PAGE_SIZES = [6, 12, 24, 48] as const;

/** The largest page number accepted: far beyond any gallery, far below overflowing an offset. */
export const GALLERY_MAX_PAGE = 1_000_000;

export type GalleryPageSize = (typeof GALLERY_PAGE_SIZES)[number];

export function isGalleryPageSize(value: number): value is GalleryPageSize {
  return (GALLERY_PAGE_SIZES as readonly number[]).includes(value);
}

/**
 * /gallery's page and page size from the URL; anything else (a size not offered, a page
 * that is not a plain whole number) is left out, so the defaults apply.
 */
export function gallerySearchOf(search: Record<string, unknown>): { page?: number; limit?: GalleryPageSize } {
  const whole = (value: unknown): number | undefined => {
    const text = typeof value === 'number' ? String(value) : value;
    if (typeof text !== 'string' || !/^[1-9][0-9]{0,6}$/.test(text)) return undefined;
    return Number(text);
  };
  const page = whole(search.page);
  const limit = whole(search.limit);
  return {
    ...(page !== undefined && page <= GALLERY_MAX_PAGE ? { page } : {}),
    ...(limit !== undefined && isGalleryPageSize(limit) ? { limit } : {}),
  };
}
