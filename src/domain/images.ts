import { z } from 'zod';
import { insufficientTokensMessage, type Problem } from './errors';
import { storedText, textLength } from './text';
import {
  ASPECT_RATIOS,
  DEFAULT_ASPECT_RATIO,
  DEFAULT_SD3_VARIANT,
  DEFAULT_SDXL_SIZE,
  generationMessages,
  isAspectRatio,
  isSd3Variant,
  isStylePreset,
  parseSdxlSize,
  unknownModelMessage,
  IMAGE_MODELS,
  isImageModelId,
  isSdxlSize,
  NEGATIVE_PROMPT_MAX_LENGTH,
  PROMPT_MAX_LENGTH,
  SD3_VARIANTS,
  SEED_MAX,
  SEED_MIN,
  STYLE_PRESETS,
  type AspectRatio,
  type ImageModelId,
  type Sd3Variant,
} from './image-catalogue';

/**
 * Image generation's request rules and schemas (SPEC sections 5, 7, 8), built on the
 * catalogue (image-catalogue.ts, which holds no schema so that texts and the router can
 * read it without loading the schema library). Isomorphic: no Node or DOM APIs.
 */
export * from './image-catalogue';
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
