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
});

export type ImageRecord = z.infer<typeof imageRecordSchema>;

/** The body of a successful generation: `{success, data, tokens: {charged}, message}`. */
export const generationReplySchema = z.object({
  success: z.literal(true),
  data: imageRecordSchema,
  tokens: z.object({ charged: z.number().int() }),
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

export const GENERATION_SUCCESS_MESSAGE = 'Image generated successfully';

export function paginationOf(page: number, limit: number, total: number): Pagination {
  const totalPages = Math.ceil(total / limit);
  return { currentPage: page, totalPages, total, hasNext: page < totalPages, hasPrev: page > 1 };
}
