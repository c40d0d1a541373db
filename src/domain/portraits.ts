import { z } from 'zod';
import { generationMessages, PORTRAIT_COST, PROMPT_MAX_LENGTH, STYLE_PRESETS } from './images';
import { isStorableText, TEXT_ERROR_CODES, textLength, textMessages } from './text';

/**
 * The portrait creator's rules (SPEC sections 2, 3, 5, 7, 8, 9): texts, numbers and the
 * checks shared by the browser and the server. Isomorphic: no Node or DOM APIs.
 */

export { PORTRAIT_COST };

/** The generation_requests.model and images.model of a portrait. */
export const PORTRAIT_MODEL = 'portrait';
/** SPEC section 4: the model a face-swap result is shown with. */
export const PORTRAIT_MODEL_LABEL = 'Portrait generation';

export const PORTRAIT_ASPECT_RATIOS = ['1:1', '16:9', '2:3', '3:2', '4:5', '5:4'] as const;
export type PortraitAspectRatio = (typeof PORTRAIT_ASPECT_RATIOS)[number];
export const DEFAULT_PORTRAIT_ASPECT_RATIO: PortraitAspectRatio = '1:1';

export const PORTRAIT_OUTPUT_FORMATS = ['webp', 'png', 'jpeg'] as const;
export type PortraitOutputFormat = (typeof PORTRAIT_OUTPUT_FORMATS)[number];

/** SPEC section 7: the portrait screen fixes these two. */
export const PORTRAIT_SCREEN_STYLE_PRESET = 'photographic';
export const PORTRAIT_SCREEN_OUTPUT_FORMAT: PortraitOutputFormat = 'webp';

/** SPEC section 9: upload max 10MB. */
export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;
export const UPLOAD_MAX_MB = 10;
/** SPEC section 5's allowed declared types (the server decides by the bytes). */
export const UPLOAD_MIME_TYPES = ['image/jpeg', 'image/jpg', 'image/png', 'image/webp'] as const;
/** The picker's accept list. */
export const UPLOAD_ACCEPT = '.jpg,.jpeg,.png,.webp,image/jpeg,image/png,image/webp';
/** A face needs room: the photo's short edge must be at least this (after EXIF rotation). */
export const UPLOAD_MIN_EDGE = 256;
/** Decompression bombs stop here: 50 megapixels holds any phone camera's photo. */
export const UPLOAD_MAX_PIXELS = 50_000_000;
export const UPLOAD_MAX_MEGAPIXELS = UPLOAD_MAX_PIXELS / 1_000_000;

export const portraitMessages = {
  photoRequired: 'Please upload a photo first',
  promptRequired: 'Please enter a prompt',
  promptTooLong: generationMessages.promptTooLong,
  insufficientTokens: `Insufficient tokens. You need ${PORTRAIT_COST} tokens for portrait generation.`,
  unsupportedType: 'Only JPG, PNG, and WebP formats are supported',
  failure: 'Face-swap generation failed',
  success: 'Portrait generated successfully',
  // No SPEC wording for the ones below: a hostile or broken upload, or a hand-made request.
  unreadable: 'The photo could not be read: the file is empty, damaged or incomplete',
  animated: 'Animated images are not supported: please upload a still photo',
  tooSmall: `The photo is too small to show a face: it needs at least ${UPLOAD_MIN_EDGE} pixels on its short side`,
  tooManyPixels: `The photo has too many pixels: at most ${UPLOAD_MAX_MEGAPIXELS} megapixels`,
  tooManyFiles: 'Please upload one photo at a time',
  referenceInvalid: 'The photo must be one of your own images',
  aspectRatioInvalid: `Aspect ratio must be one of ${PORTRAIT_ASPECT_RATIOS.join(', ')}`,
  outputFormatInvalid: `Output format must be one of ${PORTRAIT_OUTPUT_FORMATS.join(', ')}`,
  notMultipart: 'The portrait request must be sent as multipart/form-data',
  unknownField: 'The portrait form has a field it does not take',
} as const;

/** "File size must be less than 10MB. Current size: x MB", x in MB with 2 decimals. */
export function fileTooLargeMessage(bytes: number): string {
  return `File size must be less than ${UPLOAD_MAX_MB}MB. Current size: ${megabytes(bytes)} MB`;
}

export function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(2);
}

export function isPortraitAspectRatio(value: unknown): value is PortraitAspectRatio {
  return typeof value === 'string' && (PORTRAIT_ASPECT_RATIOS as readonly string[]).includes(value);
}

export function isPortraitOutputFormat(value: unknown): value is PortraitOutputFormat {
  return typeof value === 'string' && (PORTRAIT_OUTPUT_FORMATS as readonly string[]).includes(value);
}

const isBlank = (value: string | undefined | null) => value === undefined || value === null || value.trim() === '';

/** A refusal as the API words it: a code from the catalogue, SPEC's text, and its values. */
export interface PortraitProblem {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** The first problem of a chosen file as the browser sees it (size, then declared type). */
export function uploadProblem(file: { size: number; type: string }): PortraitProblem | null {
  if (file.size > UPLOAD_MAX_BYTES) {
    return {
      code: 'UPLOAD_TOO_LARGE',
      message: fileTooLargeMessage(file.size),
      details: { sizeMb: megabytes(file.size), maxMb: UPLOAD_MAX_MB },
    };
  }
  if (!(UPLOAD_MIME_TYPES as readonly string[]).includes(file.type.toLowerCase())) {
    return { code: 'UPLOAD_UNSUPPORTED_TYPE', message: portraitMessages.unsupportedType };
  }
  return null;
}

export interface PortraitInput {
  hasPhoto: boolean;
  prompt: string;
}

/** SPEC section 5's portrait rules in its order; the first failure, or null. */
export function validatePortrait(input: PortraitInput, balance: number): PortraitProblem | null {
  if (!input.hasPhoto) return { code: 'PHOTO_REQUIRED', message: portraitMessages.photoRequired };
  if (isBlank(input.prompt)) return { code: 'PROMPT_REQUIRED', message: portraitMessages.promptRequired };
  if (textLength(input.prompt) > PROMPT_MAX_LENGTH) {
    return { code: 'VALIDATION_ERROR', message: portraitMessages.promptTooLong, details: { max: PROMPT_MAX_LENGTH } };
  }
  if (!(balance >= PORTRAIT_COST)) {
    return {
      code: 'INSUFFICIENT_TOKENS',
      message: portraitMessages.insufficientTokens,
      details: { cost: PORTRAIT_COST, balance },
    };
  }
  return null;
}

/** The Face-swap result (SPEC section 3) as the API sends it. */
export const portraitResultSchema = z.object({ id: z.number().int(), url: z.string(), prompt: z.string() });
export type PortraitResultData = z.infer<typeof portraitResultSchema>;

/** SPEC section 7: success, data (id, url, prompt), tokens.charged, message. */
export const portraitReplySchema = z.object({
  success: z.literal(true),
  data: portraitResultSchema,
  tokens: z.object({ charged: z.number().int() }),
  /** The user's balance once the portrait is paid for: the header shows the server's figure. */
  balanceAfter: z.number().int().nonnegative().optional(),
  message: z.string(),
});
export type PortraitReply = z.infer<typeof portraitReplySchema>;

// ---------------------------------------------------------------------------------------
// The multipart form (SPEC sections 5 and 7).

const present = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';

/**
 * storedText's rules (src/domain/text.ts) with no rule aborting the parse: the photo rule
 * runs after the fields and ranks before the prompt (SPEC's order), and an aborted field
 * would stop it. Within the prompt the first issue is still the one reported.
 */
const promptSchema = z
  .string({ error: portraitMessages.promptRequired })
  .refine((prompt) => prompt.trim() !== '', { error: portraitMessages.promptRequired })
  .refine((prompt) => isStorableText(prompt, true), {
    error: textMessages.invalidCharacters,
    params: { code: TEXT_ERROR_CODES.invalidCharacters },
  })
  .refine((prompt) => textLength(prompt) <= PROMPT_MAX_LENGTH, { error: portraitMessages.promptTooLong })
  .describe(`The portrait's description, at most ${PROMPT_MAX_LENGTH} characters`);

/**
 * The portrait form's fields: the prompt always, the photo as an upload or as a reference
 * to one of the user's own images, the options only when set. Any other field is refused.
 * The photo's size and type are not rules here: the server decides them by the bytes it
 * spooled (server/uploads/image-upload.ts), never by what the part declares.
 */
export const portraitFormSchema = z
  .strictObject(
    {
      prompt: promptSchema,
      user_image_file: z
        .file({ error: portraitMessages.photoRequired })
        .optional()
        .describe(`The photo: one JPEG, PNG or WebP image up to ${UPLOAD_MAX_MB} MB`),
      user_image: z
        .string()
        .optional()
        .describe("Instead of a file: one of the user's own images, by its id, file name or /images/ address"),
      aspect_ratio: z
        .enum(PORTRAIT_ASPECT_RATIOS, { error: portraitMessages.aspectRatioInvalid })
        .optional()
        .describe(`Default ${DEFAULT_PORTRAIT_ASPECT_RATIO}`),
      style_preset: z
        .enum(STYLE_PRESETS, { error: generationMessages.stylePresetInvalid })
        .optional()
        .describe("'none' for no style; the portrait screen sends photographic"),
      output_format: z
        .enum(PORTRAIT_OUTPUT_FORMATS, { error: portraitMessages.outputFormatInvalid })
        .optional()
        .describe('Default webp, which the portrait screen sends'),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? portraitMessages.unknownField : undefined) },
  )
  .refine((form) => form.user_image_file !== undefined || present(form.user_image), {
    error: portraitMessages.photoRequired,
    path: ['user_image_file'],
    // Runs even when other fields failed: a missing photo is SPEC's first rule, so it must
    // be there to be ranked first (firstPortraitIssue).
    when: (payload) => typeof payload.value === 'object' && payload.value !== null,
  });

export type PortraitFormFields = z.input<typeof portraitFormSchema>;

/** Rank of each form field in SPEC section 5's order; an unknown field (no path) comes last. */
const FORM_FIELD_RANK: Record<string, number> = {
  user_image_file: 1,
  user_image: 1,
  prompt: 2,
  aspect_ratio: 3,
  output_format: 4,
  style_preset: 5,
};
const UNKNOWN_FIELD_RANK = 6;

/** The issue to report of a refused form: the first in SPEC's order, not zod's. */
export function firstPortraitIssue<I extends { readonly path: readonly PropertyKey[] }>(error: {
  readonly issues: readonly I[];
}): I | undefined {
  const rank = (issue: I) => {
    const key = issue.path[0];
    return (typeof key === 'string' ? FORM_FIELD_RANK[key] : undefined) ?? UNKNOWN_FIELD_RANK;
  };
  return error.issues.reduce<I | undefined>(
    (best, issue) => (!best || rank(issue) < rank(best) ? issue : best),
    undefined,
  );
}

/** SPEC section 4: the result as an image record, with its defaults. */
export interface PortraitImage {
  id: number;
  imageUrl: string;
  fileName: string;
  prompt: string;
  model: string;
  finish_reason: string;
  fileSize: number;
  mimeType: string;
}

export function portraitImageOf(data: PortraitResultData): PortraitImage {
  return {
    id: data.id,
    imageUrl: data.url,
    fileName: data.url.split('/').pop()?.split('?')[0] ?? '',
    prompt: data.prompt,
    model: PORTRAIT_MODEL_LABEL,
    finish_reason: 'success',
    fileSize: PORTRAIT_FALLBACK_FILE_SIZE,
    mimeType: portraitMimeType(data.url),
  };
}

/** SPEC section 4: a face-swap result's mime type from the file extension. */
export function portraitMimeType(url: string): string {
  const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
  if (extension === 'jpg' || extension === 'jpeg') return 'image/jpeg';
  if (extension === 'png') return 'image/png';
  return 'image/webp';
}

/** SPEC section 4: the face-swap fallback file size. */
export const PORTRAIT_FALLBACK_FILE_SIZE = 1_024_000;
