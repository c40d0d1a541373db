import { z } from 'zod';

/**
 * SPEC section 3 "Image" and "Pagination" as the API sends them, shared by the server's
 * replies and the browser's parsing, so the two cannot drift apart.
 */
export const imageRecordSchema = z.object({
  id: z.number().int(),
  fileName: z.string(),
  originalName: z.string().nullable(),
  imageUrl: z.string(),
  prompt: z.string(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  steps: z.number().int().nullable(),
  cfgScale: z.number().nullable(),
  stylePreset: z.string().nullable(),
  size: z.string(),
  fileSize: z.number().int(),
  mimeType: z.string(),
  userId: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  seed: z.number().int().nullable(),
  model: z.string().nullable(),
  finish_reason: z.string().nullable(),
  /** Regenerate's parameters beyond SPEC's list: what the picture was made with. */
  negativePrompt: z.string().nullable(),
  aspectRatio: z.string().nullable(),
  /** sd3's model variant (sd3.5-large and so on). */
  modelVariant: z.string().nullable(),
  /** A WebP of about THUMBNAIL_LONG_EDGE px for lists; the full image when none is stored yet. */
  thumbnailUrl: z.string(),
});

export type ImageRecord = z.infer<typeof imageRecordSchema>;

/** The body of a successful generation: `{success, data, tokens: {charged}, message}`. */
export const generationReplySchema = z.object({
  success: z.literal(true),
  data: imageRecordSchema,
  tokens: z.object({ charged: z.number().int() }),
  /** The user's balance once this image is paid for: the header shows the server's figure. */
  balanceAfter: z.number().int().nonnegative().optional(),
  message: z.string(),
});

export type GenerationReply = z.infer<typeof generationReplySchema>;

export const paginationSchema = z.object({
  currentPage: z.number().int(),
  totalPages: z.number().int(),
  total: z.number().int(),
  hasNext: z.boolean(),
  hasPrev: z.boolean(),
});

export type Pagination = z.infer<typeof paginationSchema>;

export const imagePageSchema = z.object({
  images: z.array(imageRecordSchema),
  pagination: paginationSchema,
});

export type ImagePage = z.infer<typeof imagePageSchema>;

/** SPEC section 9: the dashboard previews the latest 6 images. */
export const DASHBOARD_PREVIEW_LIMIT = 6;
export const IMAGE_PAGE_DEFAULT_LIMIT = 12;
export const IMAGE_PAGE_MAX_LIMIT = 100;
export { GALLERY_PAGE_SIZES } from './gallery-search';
/** The longest prompt search the server accepts (the prompt's own limit). */
export const IMAGE_SEARCH_MAX_LENGTH = 2000;
/** The long edge of a list thumbnail, in pixels (server/images/thumbnails.ts makes them). */
export const THUMBNAIL_LONG_EDGE = 384;

/** The thumbnail's pixel size for an image of this size (never enlarged), for <img width height>. */
export function thumbnailSize(width: number | null, height: number | null): { width: number; height: number } {
  if (!width || !height) return { width: THUMBNAIL_LONG_EDGE, height: THUMBNAIL_LONG_EDGE };
  const scale = Math.min(1, THUMBNAIL_LONG_EDGE / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

export const GENERATION_SUCCESS_MESSAGE = 'Image generated successfully';

export function paginationOf(page: number, limit: number, total: number): Pagination {
  const totalPages = Math.ceil(total / limit);
  return { currentPage: page, totalPages, total, hasNext: page < totalPages, hasPrev: page > 1 };
}
