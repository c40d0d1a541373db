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
