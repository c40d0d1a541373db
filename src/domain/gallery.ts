import { z } from 'zod';
import {
  IMAGE_PAGE_DEFAULT_LIMIT,
  IMAGE_PAGE_MAX_LIMIT,
  IMAGE_SEARCH_MAX_LENGTH,
  type ImageRecord,
} from './image-record';
import { GALLERY_MAX_PAGE } from './gallery-search';

export { GALLERY_MAX_PAGE, gallerySearchOf, isGalleryPageSize, type GalleryPageSize } from './gallery-search';

/** PostgreSQL's integer: no image id is larger. */
export const IMAGE_ID_MAX = 2_147_483_647;

/**
 * A whole number written as plain decimal digits, no sign, exponent, hex or leading zero
 * ("12", not "+12", "1e1", "0x0c" or "012"), as a query or path value arrives: text.
 */
export function plainDecimal(message: string, max: number) {
  return z
    .string({ error: message })
    .regex(/^[1-9][0-9]{0,15}$/, message)
    .transform(Number)
    .refine((value) => value <= max, message);
}

// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** Characters as the user sees them (code points), the one way lengths are counted here. */
export function characterCount(text: string): number {
  return [...text].length;
}

export const pageMessage = `page must be a whole number from 1 to ${GALLERY_MAX_PAGE}`;
export const limitMessage = `limit must be a whole number from 1 to ${IMAGE_PAGE_MAX_LIMIT}`;
export const searchMessage = `q must be text of at most ${IMAGE_SEARCH_MAX_LENGTH} characters without control characters`;

/** GET /api/images/my-images's query: page and limit optional (SPEC section 5), q optional. */
export const imageListQuerySchema = z.object({
  page: plainDecimal(pageMessage, GALLERY_MAX_PAGE).default(1),
  limit: plainDecimal(limitMessage, IMAGE_PAGE_MAX_LIMIT).default(IMAGE_PAGE_DEFAULT_LIMIT),
  q: z
    .string({ error: searchMessage })
    .refine((q) => characterCount(q) <= IMAGE_SEARCH_MAX_LENGTH && !CONTROL_CHARACTERS.test(q), searchMessage)
    .transform((q) => q.trim())
    // A blank search is no search.
    .transform((q) => (q === '' ? undefined : q))
    .optional(),
});

export const imageIdParamsSchema = z.object({
  id: plainDecimal('id must be a whole number', IMAGE_ID_MAX),
});

/** One slot of the pagination bar: a page number or a gap. */
export type PageSlot = { kind: 'page'; page: number } | { kind: 'gap'; key: 'start' | 'end' };

/** With this many pages or fewer, every page is listed (SPEC "Pagination"). */
export const PAGINATION_LIST_ALL_UP_TO = 7;

/**
 * SPEC's pagination window: nothing with 1 page or fewer; every page with 7 or fewer;
 * otherwise the first, the last and the current page with its neighbours, a gap
 * standing for the pages left out (a single left-out page is shown instead of a gap).
 */
export function paginationWindow(current: number, totalPages: number): PageSlot[] {
  if (totalPages <= 1) return [];
  const page = (n: number): PageSlot => ({ kind: 'page', page: n });
  if (totalPages <= PAGINATION_LIST_ALL_UP_TO) return Array.from({ length: totalPages }, (_, i) => page(i + 1));
  const at = Math.min(Math.max(1, current), totalPages);
  const from = Math.max(2, at - 1);
  const to = Math.min(totalPages - 1, at + 1);
  const slots: PageSlot[] = [page(1)];
  if (from === 3) slots.push(page(2));
  else if (from > 3) slots.push({ kind: 'gap', key: 'start' });
  for (let n = from; n <= to; n += 1) slots.push(page(n));
  if (to === totalPages - 2) slots.push(page(totalPages - 1));
  else if (to < totalPages - 2) slots.push({ kind: 'gap', key: 'end' });
  slots.push(page(totalPages));
  return slots;
}

/** SPEC: the search box filters the loaded page by prompt, case-insensitively. */
export function filterByPrompt(images: readonly ImageRecord[], text: string): ImageRecord[] {
  const needle = text.trim().toLocaleLowerCase();
  if (needle === '') return [...images];
  return images.filter((image) => image.prompt.toLocaleLowerCase().includes(needle));
}

/**
 * /dashboard's search parameters that make the image again: every parameter it was made
 * with, as text (the form edits text). Absent values are left out.
 */
export interface RegenerateSearch {
  prompt: string;
  model?: string;
  size?: string;
  aspectRatio?: string;
  stylePreset?: string;
  negativePrompt?: string;
  variant?: string;
  seed?: string;
}

export function regenerateSearch(image: ImageRecord): RegenerateSearch {
  const search: RegenerateSearch = { prompt: image.prompt };
  if (image.model) search.model = image.model;
  // original is sized in pixels; the other models by aspect ratio.
  if (image.aspectRatio) search.aspectRatio = image.aspectRatio;
  else if (image.width && image.height) search.size = `${image.width}x${image.height}`;
  if (image.stylePreset) search.stylePreset = image.stylePreset;
  if (image.negativePrompt) search.negativePrompt = image.negativePrompt;
  if (image.modelVariant) search.variant = image.modelVariant;
  if (image.seed !== null) search.seed = String(image.seed);
  return search;
}
