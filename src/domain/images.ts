import { z } from 'zod';
import { insufficientTokensMessage, type Problem } from './errors';
import { storedText, textLength } from './text';

/**
 * The image model catalogue (SPEC sections 3, 5, 8, 9): the one place the browser, the
 * API routes and the providers read model ids, costs, options and wordings from.
 * Isomorphic: no Node or DOM APIs.
 */

export const IMAGE_MODEL_IDS = ['original', 'ultra', 'core', 'sd3'] as const;
export type ImageModelId = (typeof IMAGE_MODEL_IDS)[number];

export const OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const PROMPT_MAX_LENGTH = 2000;
export const NEGATIVE_PROMPT_MAX_LENGTH = 2000;
export const SEED_MIN = 0;
export const SEED_MAX = 4294967295;
export const PORTRAIT_COST = 12;

export interface ImageSize {
  readonly width: number;
  readonly height: number;
}

/** SDXL sizes for the original model; the first is the form's default. */
export const SDXL_SIZES = [
  { width: 1024, height: 1024 },
  { width: 1152, height: 896 },
  { width: 896, height: 1152 },
  { width: 1216, height: 832 },
  { width: 832, height: 1216 },
  { width: 1344, height: 768 },
  { width: 768, height: 1344 },
  { width: 1536, height: 640 },
  { width: 640, height: 1536 },
] as const satisfies readonly ImageSize[];

/** The sizes as the "WIDTHxHEIGHT" strings the size select uses. */
export const SDXL_SIZE_VALUES: readonly string[] = SDXL_SIZES.map((s) => formatImageSize(s));
export const DEFAULT_SDXL_SIZE: ImageSize = SDXL_SIZES[0];

export const ASPECT_RATIOS = ['1:1', '16:9', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];
export const DEFAULT_ASPECT_RATIO: AspectRatio = '1:1';

export const STYLE_PRESETS = [
  'none',
  'anime',
  'cinematic',
  'digital-art',
  'enhance',
  'fantasy-art',
  'isometric',
  'line-art',
  'low-poly',
  'modeling-compound',
  'neon-punk',
  'origami',
  'photographic',
  'pixel-art',
  'tile-texture',
] as const;
export type StylePreset = (typeof STYLE_PRESETS)[number];

export const SD3_VARIANTS = ['sd3.5-large', 'sd3.5-large-turbo', 'sd3.5-medium'] as const;
export type Sd3Variant = (typeof SD3_VARIANTS)[number];
export const DEFAULT_SD3_VARIANT: Sd3Variant = 'sd3.5-large';

export interface ImageModelInfo {
  readonly id: ImageModelId;
  readonly label: string;
  /** Tokens charged per generation (SPEC section 9). */
  readonly cost: number;
  /** Our API route the browser posts to (SPEC section 7). */
  readonly endpoint: string;
  /** Shown when a generation fails and the server sent no message (SPEC section 8). */
  readonly failureMessage: string;
  /** original takes an SDXL pixel size; the v2beta models take an aspect ratio. */
  readonly dimension: 'size' | 'aspectRatio';
  readonly hasStylePresets: boolean;
  readonly hasVariants: boolean;
  readonly outputFormats: readonly OutputFormat[];
  readonly defaultOutputFormat: OutputFormat;
}

export const IMAGE_MODELS: Readonly<Record<ImageModelId, ImageModelInfo>> = {
  original: {
    id: 'original',
    label: 'Original SD XL',
    cost: 2,
    endpoint: '/api/stability/text-to-image',
    failureMessage: 'Generation failed',
    dimension: 'size',
    // SDXL v1 takes style_preset too; the original endpoint forwards it when given.
    hasStylePresets: true,
    hasVariants: false,
    outputFormats: ['png', 'jpeg', 'webp'],
    defaultOutputFormat: 'png',
  },
  ultra: {
    id: 'ultra',
    label: 'premium model',
    cost: 16,
    endpoint: '/api/stability-ultra/generate',
    failureMessage: 'Ultra generation failed',
    dimension: 'aspectRatio',
    hasStylePresets: false,
    hasVariants: false,
    outputFormats: ['png', 'jpeg', 'webp'],
    defaultOutputFormat: 'png',
  },
  core: {
    id: 'core',
    label: 'FLUX.1',
    cost: 6,
    endpoint: '/api/stability-core/generate',
    failureMessage: 'Core generation failed',
    dimension: 'aspectRatio',
    hasStylePresets: true,
    hasVariants: false,
    outputFormats: ['png', 'jpeg', 'webp'],
    defaultOutputFormat: 'png',
  },
  sd3: {
    id: 'sd3',
    label: 'Stable Diffusion 3.5',
    cost: 12,
    endpoint: '/api/stability-sd3/generate',
    failureMessage: 'SD3 generation failed',
    dimension: 'aspectRatio',
    hasStylePresets: false,
    hasVariants: true,
    // SPEC: "no WebP" (older Stability references refuse it on /sd3).
    outputFormats: ['png', 'jpeg'],
    defaultOutputFormat: 'png',
  },
};

/** The catalogue in display order. */
export const IMAGE_MODEL_LIST: readonly ImageModelInfo[] = IMAGE_MODEL_IDS.map((id) => IMAGE_MODELS[id]);

export function isImageModelId(value: unknown): value is ImageModelId {
  return typeof value === 'string' && (IMAGE_MODEL_IDS as readonly string[]).includes(value);
}

export function isAspectRatio(value: unknown): value is AspectRatio {
  return typeof value === 'string' && (ASPECT_RATIOS as readonly string[]).includes(value);
}

export function isStylePreset(value: unknown): value is StylePreset {
  return typeof value === 'string' && (STYLE_PRESETS as readonly string[]).includes(value);
}

export function isSd3Variant(value: unknown): value is Sd3Variant {
  return typeof value === 'string' && (SD3_VARIANTS as readonly string[]).includes(value);
}

export function isSdxlSize(width: unknown, height: unknown): boolean {
  return SDXL_SIZES.some((s) => s.width === width && s.height === height);
}

export function isOutputFormatAllowed(model: ImageModelId, format: OutputFormat): boolean {
  return IMAGE_MODELS[model].outputFormats.includes(format);
}

export function formatImageSize(size: ImageSize): string {
  return `${size.width}x${size.height}`;
}

/** Parses a "WIDTHxHEIGHT" select value; null unless it is one of the SDXL sizes. */
export function parseSdxlSize(value: string): ImageSize | null {
  const match = /^(\d+)x(\d+)$/.exec(value.trim());
  if (!match) return null;
  const width = Number(match[1]);
  const height = Number(match[2]);
  return isSdxlSize(width, height) ? { width, height } : null;
}

export const generationMessages = {
  promptRequired: 'Prompt is required',
  promptTooLong: 'Prompt must be less than 2000 characters',
  negativePromptTooLong: 'Negative prompt must be less than 2000 characters',
  seedInvalid: 'Seed must be a number between 0 and 4294967295',
  sizeRequired: 'Image size is required',
  aspectRatioRequired: 'Aspect ratio is required',
  variantRequired: 'Model variant is required for SD3',
  // The four below have no SPEC wording: values the form cannot produce, only a hand-made request.
  sizeInvalid: `Image size must be one of ${SDXL_SIZES.map((s) => formatImageSize(s)).join(', ')}`,
  aspectRatioInvalid: `Aspect ratio must be one of ${ASPECT_RATIOS.join(', ')}`,
  variantInvalid: `Model variant must be one of ${SD3_VARIANTS.join(', ')}`,
  stylePresetInvalid: `Style preset must be one of ${STYLE_PRESETS.join(', ')}`,
  dashboardFallback: 'Generation failed. Please try again.',
} as const;

export function unknownModelMessage(model: string): string {
  return `Unknown model: ${model}`;
}

export type SeedInput = string | number | null | undefined;

/**
 * The seed as the form holds it. Returns undefined when not given ('' or blank), the
 * number when it is a whole number in range, and null when it is invalid. Strings must
 * be plain digits so that "1e3", "0x10" or "12.0" are not quietly accepted.
 */
export function parseSeed(seed: SeedInput): number | undefined | null {
  if (seed === undefined || seed === null) return undefined;
  if (typeof seed === 'number') return isValidSeed(seed) ? seed : null;
  const trimmed = seed.trim();
  if (trimmed === '') return undefined;
  if (!/^\d+$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return isValidSeed(value) ? value : null;
}

function isValidSeed(value: number): boolean {
  return Number.isInteger(value) && value >= SEED_MIN && value <= SEED_MAX;
}

export interface GenerationInput {
  model: ImageModelId;
  prompt: string;
  negativePrompt?: string;
  seed?: SeedInput;
  /** "WIDTHxHEIGHT", for original. */
  size?: string;
  aspectRatio?: string;
  stylePreset?: string;
  sd3Model?: string;
}

function isBlank(value: string | undefined | null): boolean {
  return value === undefined || value === null || value.trim() === '';
}

/**
 * SPEC section 5's generation rules, in its order; returns the first failure or null, as
 * a problem: its code, the values its wording needs, and SPEC's English text. An unknown
 * model is reported first because every later rule depends on it. Options that do not
 * belong to the chosen model (a ratio for original, a variant for core) are ignored, as
 * the form keeps them while the user switches models.
 */
export function generationProblem(input: GenerationInput, balance: number): Problem | null {
  const rule = (key: keyof typeof generationMessages): Problem => ({
    code: 'VALIDATION_ERROR',
    message: generationMessages[key],
    details: { rule: key },
  });
  if (!isImageModelId(input.model)) {
    const model = String(input.model);
    return { code: 'UNKNOWN_MODEL', message: unknownModelMessage(model), details: { model } };
  }
  const model = IMAGE_MODELS[input.model];

  if (isBlank(input.prompt)) return rule('promptRequired');
  if (textLength(input.prompt) > PROMPT_MAX_LENGTH) return rule('promptTooLong');
  if (textLength(input.negativePrompt ?? '') > NEGATIVE_PROMPT_MAX_LENGTH) return rule('negativePromptTooLong');
  if (parseSeed(input.seed) === null) return rule('seedInvalid');
  if (!(balance >= model.cost)) {
    return {
      code: 'INSUFFICIENT_TOKENS',
      message: insufficientTokensMessage(model.cost, balance),
      details: { cost: model.cost, balance },
    };
  }

  if (model.dimension === 'size') {
    if (isBlank(input.size)) return rule('sizeRequired');
    if (parseSdxlSize(input.size ?? '') === null) return rule('sizeInvalid');
  } else {
    if (isBlank(input.aspectRatio)) return rule('aspectRatioRequired');
    if (!isAspectRatio(input.aspectRatio)) return rule('aspectRatioInvalid');
  }
  if (model.hasVariants) {
    if (isBlank(input.sd3Model)) return rule('variantRequired');
    if (!isSd3Variant(input.sd3Model)) return rule('variantInvalid');
  }
  if (model.hasStylePresets && !isBlank(input.stylePreset) && !isStylePreset(input.stylePreset)) {
    return rule('stylePresetInvalid');
  }
  return null;
}

/** SPEC section 5's first failing generation rule as SPEC's text, or null. */
export function validateGeneration(input: GenerationInput, balance: number): string | null {
  return generationProblem(input, balance)?.message ?? null;
}

/** Whether the submit button may be pressed (SPEC section 5), apart from "while generating". */
export function canSubmitGeneration(input: Pick<GenerationInput, 'model' | 'prompt'>, balance: number): boolean {
  return isImageModelId(input.model) && !isBlank(input.prompt) && balance >= IMAGE_MODELS[input.model].cost;
}

// ---------------------------------------------------------------------------------------
// Request bodies of our four endpoints (SPEC section 7).

const isMissing = (input: unknown): boolean =>
  input === undefined || input === null || (typeof input === 'string' && input.trim() === '');

const promptSchema = storedText({
  max: PROMPT_MAX_LENGTH,
  multiline: true,
  required: generationMessages.promptRequired,
  notText: generationMessages.promptRequired,
  tooLong: generationMessages.promptTooLong,
});

const negativePromptSchema = storedText({
  max: NEGATIVE_PROMPT_MAX_LENGTH,
  multiline: true,
  notText: 'Negative prompt must be text',
  tooLong: generationMessages.negativePromptTooLong,
}).nullish();

// null is accepted as "not given": JSON clients often send it for an empty field.
const seedSchema = z
  .number({ error: generationMessages.seedInvalid })
  .int(generationMessages.seedInvalid)
  .min(SEED_MIN, generationMessages.seedInvalid)
  .max(SEED_MAX, generationMessages.seedInvalid)
  .nullish();

const dimensionSchema = z
  .number({
    error: (issue) => (isMissing(issue.input) ? generationMessages.sizeRequired : generationMessages.sizeInvalid),
  })
  .int(generationMessages.sizeInvalid);

const aspectRatioSchema = z.enum(ASPECT_RATIOS, {
  error: (issue) =>
    isMissing(issue.input) ? generationMessages.aspectRatioRequired : generationMessages.aspectRatioInvalid,
});

const stylePresetSchema = z.enum(STYLE_PRESETS, { error: generationMessages.stylePresetInvalid }).optional();

const sd3VariantSchema = z.enum(SD3_VARIANTS, {
  error: (issue) => (isMissing(issue.input) ? generationMessages.variantRequired : generationMessages.variantInvalid),
});

// A body that is not an object at all has no prompt, so rule 1 is what the user hears.
const objectParams = { error: generationMessages.promptRequired };

export const originalGenerationBodySchema = z
  .object(
    {
      prompt: promptSchema,
      negative_prompt: negativePromptSchema,
      seed: seedSchema,
      width: dimensionSchema,
      height: dimensionSchema,
      style_preset: stylePresetSchema,
    },
    objectParams,
  )
  .refine((body) => isSdxlSize(body.width, body.height), {
    message: generationMessages.sizeInvalid,
    path: ['width'],
    // Runs even when other fields failed, so the size issue is there to be ranked.
    when: (payload) => {
      const value = payload.value as { width?: unknown; height?: unknown } | null;
      return (
        typeof value === 'object' && value !== null && Number.isInteger(value.width) && Number.isInteger(value.height)
      );
    },
  });

export const ultraGenerationBodySchema = z.object(
  {
    prompt: promptSchema,
    negative_prompt: negativePromptSchema,
    seed: seedSchema,
    aspect_ratio: aspectRatioSchema,
  },
  objectParams,
);

export const coreGenerationBodySchema = z.object(
  {
    prompt: promptSchema,
    negative_prompt: negativePromptSchema,
    seed: seedSchema,
    aspect_ratio: aspectRatioSchema,
    style_preset: stylePresetSchema,
  },
  objectParams,
);

export const sd3GenerationBodySchema = z.object(
  {
    prompt: promptSchema,
    negative_prompt: negativePromptSchema,
    seed: seedSchema,
    aspect_ratio: aspectRatioSchema,
    model: sd3VariantSchema,
  },
  objectParams,
);

export type OriginalGenerationBody = z.infer<typeof originalGenerationBodySchema>;
export type UltraGenerationBody = z.infer<typeof ultraGenerationBodySchema>;
export type CoreGenerationBody = z.infer<typeof coreGenerationBodySchema>;
export type Sd3GenerationBody = z.infer<typeof sd3GenerationBodySchema>;

export const generationBodySchemas = {
  original: originalGenerationBodySchema,
  ultra: ultraGenerationBodySchema,
  core: coreGenerationBodySchema,
  sd3: sd3GenerationBodySchema,
} as const;

export type GenerationBody = OriginalGenerationBody | UltraGenerationBody | CoreGenerationBody | Sd3GenerationBody;

/** Rank of each body field in SPEC section 5's order; the size pair sits with width. */
const FIELD_RANK: Record<string, number> = {
  prompt: 1,
  negative_prompt: 3,
  seed: 4,
  width: 6,
  height: 6,
  aspect_ratio: 7,
  model: 8,
  style_preset: 9,
};
const UNRANKED = 100;

interface IssueLike {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * The first issue in SPEC's rule order. Zod reports issues in field order and may add
 * object-level ones last, so the order is restored here; within one field the schema's
 * own check order (required before length) is kept.
 */
export function firstIssue<I extends IssueLike>(error: { readonly issues: readonly I[] }): I | undefined {
  let best: { rank: number; index: number; issue: I } | undefined;
  error.issues.forEach((issue, index) => {
    const key = issue.path[0];
    const rank = issue.path.length === 0 ? 0 : ((typeof key === 'string' ? FIELD_RANK[key] : undefined) ?? UNRANKED);
    if (!best || rank < best.rank || (rank === best.rank && index < best.index)) {
      best = { rank, index, issue };
    }
  });
  return best?.issue;
}

/** The message of the first issue in SPEC's rule order. */
export function firstIssueMessage(error: { readonly issues: readonly IssueLike[] }): string {
  return firstIssue(error)?.message ?? 'Please check your input';
}

/**
 * The endpoint and JSON body the browser sends for a form that passed
 * validateGeneration. Empty optional fields are left out rather than sent blank.
 */
export function buildGenerationRequest(input: GenerationInput): { endpoint: string; body: GenerationBody } {
  const model = IMAGE_MODELS[input.model];
  const seed = parseSeed(input.seed) ?? undefined;
  const negative = isBlank(input.negativePrompt) ? undefined : input.negativePrompt;
  const style = isStylePreset(input.stylePreset) ? input.stylePreset : undefined;
  const common = {
    prompt: input.prompt,
    ...(negative !== undefined ? { negative_prompt: negative } : {}),
    ...(seed !== undefined ? { seed } : {}),
  };
  const aspectRatio = (input.aspectRatio ?? DEFAULT_ASPECT_RATIO) as AspectRatio;
  switch (input.model) {
    case 'original': {
      const size = parseSdxlSize(input.size ?? '') ?? DEFAULT_SDXL_SIZE;
      return {
        endpoint: model.endpoint,
        body: { ...common, width: size.width, height: size.height, ...(style ? { style_preset: style } : {}) },
      };
    }
    case 'ultra':
      return { endpoint: model.endpoint, body: { ...common, aspect_ratio: aspectRatio } };
    case 'core':
      return {
        endpoint: model.endpoint,
        body: { ...common, aspect_ratio: aspectRatio, ...(style ? { style_preset: style } : {}) },
      };
    case 'sd3':
      return {
        endpoint: model.endpoint,
        body: { ...common, aspect_ratio: aspectRatio, model: (input.sd3Model ?? DEFAULT_SD3_VARIANT) as Sd3Variant },
      };
  }
}
