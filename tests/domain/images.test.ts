// One file: SPEC section 5's generation rules in SPEC's order, in one place to hold against it.
import { describe, expect, it } from 'vitest';
import {
  ASPECT_RATIOS,
  buildGenerationRequest,
  canSubmitGeneration,
  coreGenerationBodySchema,
  DEFAULT_SDXL_SIZE,
  firstIssue,
  generationProblem,
  firstIssueMessage,
  generationBodySchemas,
  IMAGE_MODEL_IDS,
  IMAGE_MODEL_LIST,
  IMAGE_MODELS,
  isOutputFormatAllowed,
  originalGenerationBodySchema,
  parseSdxlSize,
  parseSeed,
  PORTRAIT_COST,
  SD3_VARIANTS,
  sd3GenerationBodySchema,
  SDXL_SIZE_VALUES,
  SDXL_SIZES,
  STYLE_PRESETS,
  ultraGenerationBodySchema,
  validateGeneration,
  type GenerationInput,
} from '../../src/domain/images';
import { insufficientTokensMessage } from '../../src/domain/errors';

const M = {
  promptRequired: 'Prompt is required',
  promptTooLong: 'Prompt must be less than 2000 characters',
  negativeTooLong: 'Negative prompt must be less than 2000 characters',
  seed: 'Seed must be a number between 0 and 4294967295',
  sizeRequired: 'Image size is required',
  ratioRequired: 'Aspect ratio is required',
  variantRequired: 'Model variant is required for SD3',
};

describe('image model catalogue', () => {
  it('lists the four models with SPEC labels, costs, endpoints and failure texts', () => {
    expect(IMAGE_MODEL_IDS).toEqual(['original', 'ultra', 'core', 'sd3']);
    expect(IMAGE_MODEL_LIST.map((m) => [m.id, m.label, m.cost, m.endpoint, m.failureMessage])).toEqual([
      ['original', 'Original SD XL', 2, '/api/stability/text-to-image', 'Generation failed'],
      ['ultra', 'premium model', 16, '/api/stability-ultra/generate', 'Ultra generation failed'],
      ['core', 'FLUX.1', 6, '/api/stability-core/generate', 'Core generation failed'],
      ['sd3', 'Stable Diffusion 3.5', 12, '/api/stability-sd3/generate', 'SD3 generation failed'],
    ]);
    expect(PORTRAIT_COST).toBe(12);
  });

  it('has the nine SDXL sizes with 1024x1024 first and default', () => {
    expect(SDXL_SIZE_VALUES).toEqual([
      '1024x1024',
      '1152x896',
      '896x1152',
      '1216x832',
      '832x1216',
      '1344x768',
      '768x1344',
      '1536x640',
      '640x1536',
    ]);
    expect(DEFAULT_SDXL_SIZE).toEqual({ width: 1024, height: 1024 });
  });

  it('has the nine ratios, fifteen style presets and three SD3 variants', () => {
    expect(ASPECT_RATIOS).toEqual(['1:1', '16:9', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21']);
    expect(STYLE_PRESETS).toEqual([
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
    ]);
    expect(SD3_VARIANTS).toEqual(['sd3.5-large', 'sd3.5-large-turbo', 'sd3.5-medium']);
  });

  it('allows WebP for original and never for sd3', () => {
    expect(isOutputFormatAllowed('original', 'webp')).toBe(true);
    expect(isOutputFormatAllowed('original', 'png')).toBe(true);
    expect(isOutputFormatAllowed('original', 'jpeg')).toBe(true);
    expect(isOutputFormatAllowed('sd3', 'webp')).toBe(false);
    expect(isOutputFormatAllowed('sd3', 'png')).toBe(true);
    expect(isOutputFormatAllowed('sd3', 'jpeg')).toBe(true);
    // Only sd3 has "no WebP" in SPEC 3.
    for (const model of ['ultra', 'core'] as const) {
      for (const format of ['png', 'jpeg', 'webp'] as const) expect(isOutputFormatAllowed(model, format)).toBe(true);
    }
    for (const id of IMAGE_MODEL_IDS) {
      expect(IMAGE_MODELS[id].outputFormats).toContain(IMAGE_MODELS[id].defaultOutputFormat);
    }
  });

  it('parses only SDXL sizes', () => {
    expect(parseSdxlSize('1152x896')).toEqual({ width: 1152, height: 896 });
    expect(parseSdxlSize('1024x1152')).toBeNull();
    expect(parseSdxlSize('big')).toBeNull();
  });

  it('words the insufficient-token message as SPEC does', () => {
    expect(insufficientTokensMessage(16, 3)).toBe('Insufficient tokens. Need 16 tokens but only have 3');
  });
});

describe('parseSeed', () => {
  it('treats undefined, null and blank as not given', () => {
    expect(parseSeed(undefined)).toBeUndefined();
    expect(parseSeed(null)).toBeUndefined();
    expect(parseSeed('')).toBeUndefined();
    expect(parseSeed('   ')).toBeUndefined();
  });

  it('accepts whole numbers from 0 to 4294967295, as numbers or digit strings', () => {
    expect(parseSeed(0)).toBe(0);
    expect(parseSeed('0')).toBe(0);
    expect(parseSeed(4294967295)).toBe(4294967295);
    expect(parseSeed(' 4294967295 ')).toBe(4294967295);
  });

  it.each([
    -1,
    4294967296,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '-1',
    '4294967296',
    '1e3',
    '0x10',
    '12.0',
    'abc',
    '1 2',
  ])('rejects %s', (seed) => {
    expect(parseSeed(seed)).toBeNull();
  });
});

describe('validateGeneration (SPEC section 5, in order)', () => {
  const valid: Record<string, GenerationInput> = {
    original: { model: 'original', prompt: 'a cat', size: '1024x1024' },
    ultra: { model: 'ultra', prompt: 'a cat', aspectRatio: '1:1' },
    core: { model: 'core', prompt: 'a cat', aspectRatio: '16:9', stylePreset: 'anime' },
    sd3: { model: 'sd3', prompt: 'a cat', aspectRatio: '9:21', sd3Model: 'sd3.5-medium' },
  };
  const rich = 1000;

  it('passes a valid form for every model', () => {
    for (const input of Object.values(valid)) expect(validateGeneration(input, rich)).toBeNull();
  });

  it('rule 1: prompt required, blank counts as missing', () => {
    for (const prompt of ['', '   ', '\n\t ']) {
      expect(validateGeneration({ ...valid.ultra!, prompt }, rich)).toBe(M.promptRequired);
    }
  });

  it('rule 2: prompt at most 2000 characters', () => {
    expect(validateGeneration({ ...valid.ultra!, prompt: 'a'.repeat(2000) }, rich)).toBeNull();
    expect(validateGeneration({ ...valid.ultra!, prompt: 'a'.repeat(2001) }, rich)).toBe(M.promptTooLong);
  });

  it('rule 3: negative prompt at most 2000 characters', () => {
    expect(validateGeneration({ ...valid.ultra!, negativePrompt: 'b'.repeat(2000) }, rich)).toBeNull();
    expect(validateGeneration({ ...valid.ultra!, negativePrompt: 'b'.repeat(2001) }, rich)).toBe(M.negativeTooLong);
  });

  it('rule 4: seed, if given, a whole number 0..4294967295', () => {
    for (const seed of [undefined, '', 0, '0', 4294967295, '4294967295']) {
      expect(validateGeneration({ ...valid.core!, seed }, rich)).toBeNull();
    }
    for (const seed of [-1, 4294967296, 2.5, 'x', '-3', '4294967296']) {
      expect(validateGeneration({ ...valid.core!, seed }, rich)).toBe(M.seed);
    }
  });

  it('rule 5: balance at least the model cost', () => {
    expect(validateGeneration(valid.original!, 2)).toBeNull();
    expect(validateGeneration(valid.original!, 1)).toBe('Insufficient tokens. Need 2 tokens but only have 1');
    expect(validateGeneration(valid.ultra!, 15)).toBe('Insufficient tokens. Need 16 tokens but only have 15');
    expect(validateGeneration(valid.core!, 5)).toBe('Insufficient tokens. Need 6 tokens but only have 5');
    expect(validateGeneration(valid.sd3!, 0)).toBe('Insufficient tokens. Need 12 tokens but only have 0');
    expect(validateGeneration(valid.sd3!, 12)).toBeNull();
  });

  it('rule 6: original needs an image size', () => {
    expect(validateGeneration({ model: 'original', prompt: 'x' }, rich)).toBe(M.sizeRequired);
    expect(validateGeneration({ model: 'original', prompt: 'x', size: '' }, rich)).toBe(M.sizeRequired);
    expect(validateGeneration({ model: 'original', prompt: 'x', size: '1000x1000' }, rich)).toMatch(
      /^Image size must be one of 1024x1024, /,
    );
  });

  it('rule 7: ultra, core and sd3 need an aspect ratio', () => {
    for (const model of ['ultra', 'core', 'sd3'] as const) {
      expect(validateGeneration({ ...valid[model]!, aspectRatio: undefined }, rich)).toBe(M.ratioRequired);
      expect(validateGeneration({ ...valid[model]!, aspectRatio: '' }, rich)).toBe(M.ratioRequired);
      expect(validateGeneration({ ...valid[model]!, aspectRatio: '4:3' }, rich)).toMatch(
        /^Aspect ratio must be one of 1:1, /,
      );
    }
    // A size alone does not satisfy the ratio rule, nor a ratio the size rule.
    expect(validateGeneration({ model: 'ultra', prompt: 'x', size: '1024x1024' }, rich)).toBe(M.ratioRequired);
    expect(validateGeneration({ model: 'original', prompt: 'x', aspectRatio: '1:1' }, rich)).toBe(M.sizeRequired);
  });

  it('rule 8: sd3 needs a model variant', () => {
    expect(validateGeneration({ ...valid.sd3!, sd3Model: undefined }, rich)).toBe(M.variantRequired);
    expect(validateGeneration({ ...valid.sd3!, sd3Model: '' }, rich)).toBe(M.variantRequired);
    expect(validateGeneration({ ...valid.sd3!, sd3Model: 'sd4' }, rich)).toMatch(/^Model variant must be one of /);
    // Only sd3 asks for it.
    expect(validateGeneration({ ...valid.core!, sd3Model: undefined }, rich)).toBeNull();
  });

  it('rejects an unknown style preset where styles apply', () => {
    expect(validateGeneration({ ...valid.core!, stylePreset: 'vaporwave' }, rich)).toMatch(
      /^Style preset must be one of none, /,
    );
    expect(validateGeneration({ ...valid.core!, stylePreset: 'none' }, rich)).toBeNull();
    expect(validateGeneration({ ...valid.core!, stylePreset: '' }, rich)).toBeNull();
  });

  it('reports an unknown model with SPEC wording', () => {
    const input = { model: 'dalle', prompt: 'x' } as unknown as GenerationInput;
    expect(validateGeneration(input, rich)).toBe('Unknown model: dalle');
  });

  it('reports only the first failing rule', () => {
    const everythingWrong: GenerationInput = {
      model: 'sd3',
      prompt: '   ',
      negativePrompt: 'n'.repeat(2001),
      seed: 'nope',
      aspectRatio: '',
      sd3Model: '',
    };
    expect(validateGeneration(everythingWrong, 0)).toBe(M.promptRequired);
    // A blank prompt longer than 2000 characters is still "required" (rule 1 before rule 2).
    expect(validateGeneration({ ...everythingWrong, prompt: ' '.repeat(2001) }, 0)).toBe(M.promptRequired);
    expect(validateGeneration({ ...everythingWrong, prompt: 'p'.repeat(2001) }, 0)).toBe(M.promptTooLong);
    expect(validateGeneration({ ...everythingWrong, prompt: 'ok' }, 0)).toBe(M.negativeTooLong);
    expect(validateGeneration({ ...everythingWrong, prompt: 'ok', negativePrompt: '' }, 0)).toBe(M.seed);
    expect(validateGeneration({ ...everythingWrong, prompt: 'ok', negativePrompt: '', seed: '' }, 0)).toBe(
      'Insufficient tokens. Need 12 tokens but only have 0',
    );
    expect(validateGeneration({ ...everythingWrong, prompt: 'ok', negativePrompt: '', seed: '' }, 12)).toBe(
      M.ratioRequired,
    );
    expect(
      validateGeneration({ ...everythingWrong, prompt: 'ok', negativePrompt: '', seed: '', aspectRatio: '1:1' }, 12),
    ).toBe(M.variantRequired);
    expect(validateGeneration({ model: 'original', prompt: 'ok' }, 1)).toBe(
      'Insufficient tokens. Need 2 tokens but only have 1',
    );
  });
});

describe('canSubmitGeneration', () => {
  it('is false for a blank prompt or a balance below the cost', () => {
    expect(canSubmitGeneration({ model: 'core', prompt: 'x' }, 6)).toBe(true);
    expect(canSubmitGeneration({ model: 'core', prompt: ' ' }, 6)).toBe(false);
    expect(canSubmitGeneration({ model: 'core', prompt: 'x' }, 5)).toBe(false);
  });
});

function firstMessage(
  schema: {
    safeParse(v: unknown): {
      success: boolean;
      error?: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> };
    };
  },
  body: unknown,
): string | null {
  const result = schema.safeParse(body);
  if (result.success) return null;
  if (!result.error) throw new Error('no error on a failed parse');
  return firstIssueMessage(result.error);
}

describe('request body schemas (SPEC section 7 payloads)', () => {
  it('accepts the documented payloads', () => {
    expect(originalGenerationBodySchema.safeParse({ prompt: 'a', width: 1024, height: 1024 }).success).toBe(true);
    expect(
      originalGenerationBodySchema.safeParse({
        prompt: 'a',
        width: 640,
        height: 1536,
        negative_prompt: 'blur',
        seed: 7,
        style_preset: 'pixel-art',
      }).success,
    ).toBe(true);
    expect(ultraGenerationBodySchema.safeParse({ prompt: 'a', aspect_ratio: '21:9', seed: 0 }).success).toBe(true);
    expect(
      coreGenerationBodySchema.safeParse({
        prompt: 'a',
        aspect_ratio: '4:5',
        style_preset: 'anime',
        negative_prompt: '',
      }).success,
    ).toBe(true);
    expect(
      sd3GenerationBodySchema.safeParse({ prompt: 'a', aspect_ratio: '1:1', model: 'sd3.5-large-turbo' }).success,
    ).toBe(true);
    // JSON clients often send null for an empty optional field.
    expect(
      ultraGenerationBodySchema.safeParse({ prompt: 'a', aspect_ratio: '1:1', seed: null, negative_prompt: null })
        .success,
    ).toBe(true);
  });

  it('uses SPEC texts for each rule', () => {
    const ultra = { prompt: 'a', aspect_ratio: '1:1' };
    expect(firstMessage(ultraGenerationBodySchema, { ...ultra, prompt: undefined })).toBe(M.promptRequired);
    expect(firstMessage(ultraGenerationBodySchema, { ...ultra, prompt: '  ' })).toBe(M.promptRequired);
    expect(firstMessage(ultraGenerationBodySchema, { ...ultra, prompt: 42 })).toBe(M.promptRequired);
    expect(firstMessage(ultraGenerationBodySchema, { ...ultra, prompt: 'x'.repeat(2001) })).toBe(M.promptTooLong);
    expect(firstMessage(ultraGenerationBodySchema, { ...ultra, prompt: 'x'.repeat(2000) })).toBeNull();
    expect(firstMessage(ultraGenerationBodySchema, { ...ultra, negative_prompt: 'x'.repeat(2001) })).toBe(
      M.negativeTooLong,
    );
    for (const seed of [-1, 4294967296, 1.5, '5']) {
      expect(firstMessage(ultraGenerationBodySchema, { ...ultra, seed })).toBe(M.seed);
    }
    expect(firstMessage(ultraGenerationBodySchema, { ...ultra, seed: 4294967295 })).toBeNull();
    expect(firstMessage(ultraGenerationBodySchema, { prompt: 'a' })).toBe(M.ratioRequired);
    expect(firstMessage(ultraGenerationBodySchema, { prompt: 'a', aspect_ratio: '' })).toBe(M.ratioRequired);
    expect(firstMessage(ultraGenerationBodySchema, { prompt: 'a', aspect_ratio: '4:3' })).toMatch(
      /^Aspect ratio must be one of /,
    );
    expect(firstMessage(sd3GenerationBodySchema, { prompt: 'a', aspect_ratio: '1:1' })).toBe(M.variantRequired);
    expect(firstMessage(sd3GenerationBodySchema, { prompt: 'a', aspect_ratio: '1:1', model: 'sd3-ultra' })).toMatch(
      /^Model variant must be one of sd3.5-large, sd3.5-large-turbo, sd3.5-medium$/,
    );
    expect(
      firstMessage(coreGenerationBodySchema, { prompt: 'a', aspect_ratio: '1:1', style_preset: 'vaporwave' }),
    ).toMatch(/^Style preset must be one of /);
  });

  it('requires width and height to form one of the nine SDXL sizes', () => {
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a' })).toBe(M.sizeRequired);
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', width: 1024 })).toBe(M.sizeRequired);
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', height: 1024 })).toBe(M.sizeRequired);
    const notListed =
      /^Image size must be one of 1024x1024, 1152x896, 896x1152, 1216x832, 832x1216, 1344x768, 768x1344, 1536x640, 640x1536$/;
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', width: 1024, height: 1152 })).toMatch(notListed);
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', width: 512, height: 512 })).toMatch(notListed);
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', width: '1024', height: 1024 })).toMatch(notListed);
    for (const size of SDXL_SIZES) {
      expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', ...size })).toBeNull();
    }
  });

  it('reports the first rule in SPEC order whatever order zod found them in', () => {
    // Blank prompt AND bad seed AND no ratio: the prompt rule wins.
    expect(firstMessage(ultraGenerationBodySchema, { prompt: ' ', seed: -4 })).toBe(M.promptRequired);
    expect(firstMessage(ultraGenerationBodySchema, { seed: 'x', negative_prompt: 'n'.repeat(2001) })).toBe(
      M.promptRequired,
    );
    expect(firstMessage(ultraGenerationBodySchema, { prompt: ' '.repeat(2001) })).toBe(M.promptRequired);
    expect(firstMessage(ultraGenerationBodySchema, { prompt: 'a', seed: 'x', negative_prompt: 'n'.repeat(2001) })).toBe(
      M.negativeTooLong,
    );
    expect(firstMessage(sd3GenerationBodySchema, { prompt: 'a', seed: -1 })).toBe(M.seed);
    expect(firstMessage(sd3GenerationBodySchema, { prompt: 'a', model: 'bad' })).toBe(M.ratioRequired);
    // The size pair is checked even when a later field is wrong too.
    expect(
      firstMessage(originalGenerationBodySchema, { prompt: 'a', width: 1024, height: 1152, style_preset: 'vaporwave' }),
    ).toMatch(/^Image size must be one of /);
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', seed: 1.5, width: 1, height: 1 })).toBe(M.seed);
    // A body that is not even an object has no prompt.
    expect(firstMessage(ultraGenerationBodySchema, null)).toBe(M.promptRequired);
    expect(firstMessage(ultraGenerationBodySchema, 'prompt')).toBe(M.promptRequired);
  });

  it('keys the schemas by model id', () => {
    expect(Object.keys(generationBodySchemas)).toEqual(['original', 'ultra', 'core', 'sd3']);
  });
});

describe("generationProblem: what the form shows in the user's language", () => {
  // The English text is SPEC's; the code and its values let the screen word it in Russian
  // (SPEC 1: ru is the default language), so each must come with the problem.
  it('gives the cost and the balance with an insufficient balance', () => {
    expect(generationProblem({ model: 'ultra', prompt: 'a', aspectRatio: '1:1' }, 3)).toEqual({
      code: 'INSUFFICIENT_TOKENS',
      message: insufficientTokensMessage(16, 3),
      details: { cost: 16, balance: 3 },
    });
  });

  it('names the model when it is unknown', () => {
    expect(generationProblem({ model: 'dalle' as GenerationInput['model'], prompt: 'a' }, 100)).toEqual({
      code: 'UNKNOWN_MODEL',
      message: 'Unknown model: dalle',
      details: { model: 'dalle' },
    });
  });

  it('names the SPEC 5 rule that failed', () => {
    expect(generationProblem({ model: 'core', prompt: ' ' }, 100)).toEqual({
      code: 'VALIDATION_ERROR',
      message: M.promptRequired,
      details: { rule: 'promptRequired' },
    });
    expect(generationProblem({ model: 'sd3', prompt: 'a', aspectRatio: '1:1' }, 100)).toEqual({
      code: 'VALIDATION_ERROR',
      message: M.variantRequired,
      details: { rule: 'variantRequired' },
    });
  });
});

describe('request body schemas: missing and wrong values', () => {
  it('calls a null, blank or absent size, ratio or variant "required", and a value of the wrong kind "invalid"', () => {
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', width: null, height: null })).toBe(M.sizeRequired);
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', width: '  ', height: 1024 })).toBe(M.sizeRequired);
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', width: true, height: 1024 })).toMatch(
      /^Image size must be one of /,
    );
    expect(firstMessage(originalGenerationBodySchema, { prompt: 'a', width: [1024], height: 1024 })).toMatch(
      /^Image size must be one of /,
    );
    expect(firstMessage(ultraGenerationBodySchema, { prompt: 'a', aspect_ratio: null })).toBe(M.ratioRequired);
    expect(firstMessage(ultraGenerationBodySchema, { prompt: 'a', aspect_ratio: '  ' })).toBe(M.ratioRequired);
    expect(firstMessage(ultraGenerationBodySchema, { prompt: 'a', aspect_ratio: 1 })).toMatch(
      /^Aspect ratio must be one of /,
    );
    expect(firstMessage(sd3GenerationBodySchema, { prompt: 'a', aspect_ratio: '1:1', model: null })).toBe(
      M.variantRequired,
    );
    expect(firstMessage(sd3GenerationBodySchema, { prompt: 'a', aspect_ratio: '1:1', model: ' ' })).toBe(
      M.variantRequired,
    );
  });

  it('answers a body that is not an object with rule 1, for the size-checked model too', () => {
    for (const body of [null, undefined, 'prompt', 42, [{ prompt: 'a' }]]) {
      expect(firstMessage(originalGenerationBodySchema, body)).toBe(M.promptRequired);
    }
  });

  it('keeps newlines and tabs in the prompt and the negative prompt (docs/operations.md: multi-line texts)', () => {
    const body = { prompt: 'a cat\n\ton a mat', negative_prompt: 'blur\nnoise', aspect_ratio: '1:1' };
    expect(firstMessage(ultraGenerationBodySchema, body)).toBeNull();
    expect(ultraGenerationBodySchema.parse(body)).toMatchObject(body);
  });

  it('says so when the negative prompt is not text', () => {
    expect(firstMessage(ultraGenerationBodySchema, { prompt: 'a', aspect_ratio: '1:1', negative_prompt: 42 })).toMatch(
      /^Negative prompt /,
    );
  });
});

describe('firstIssue: several fields wrong at once (SPEC section 5 order)', () => {
  // Issues as zod reports them, in any order: the one for the field SPEC checks first wins.
  const issue = (field: string | undefined, message = `${field ?? 'body'} is wrong`) => ({
    path: field === undefined ? [] : [field],
    message,
  });
  // SPEC 5: prompt (1, 2), negative prompt (3), seed (4), size (6), aspect ratio (7),
  // variant (8); the style preset is not a SPEC rule and comes after them.
  const specOrder = ['prompt', 'negative_prompt', 'seed', 'width', 'aspect_ratio', 'model', 'style_preset'];

  it('picks the field SPEC lists first, whatever order the issues come in', () => {
    for (let first = 0; first < specOrder.length; first += 1) {
      const later = specOrder.slice(first);
      const reversed = [...later].reverse().map((field) => issue(field));
      expect(firstIssue({ issues: reversed })?.message).toBe(`${specOrder[first]} is wrong`);
      // A rotation puts the winner in the middle of the list.
      const rotated = [...later.slice(1, 3), later[0], ...later.slice(3)].map((field) => issue(field));
      expect(firstIssueMessage({ issues: rotated })).toBe(`${specOrder[first]} is wrong`);
    }
  });

  it('ranks height with width (rule 6: one image size)', () => {
    const sizeFirst = firstIssue({ issues: [issue('aspect_ratio'), issue('height'), issue('style_preset')] });
    expect(sizeFirst?.message).toBe('height is wrong');
    expect(firstIssue({ issues: [issue('height'), issue('seed')] })?.message).toBe('seed is wrong');
    // Width and height of one size: the first reported stays first.
    expect(firstIssue({ issues: [issue('height'), issue('width')] })?.message).toBe('height is wrong');
    expect(firstIssue({ issues: [issue('width'), issue('height')] })?.message).toBe('width is wrong');
  });

  it('keeps the schema order within one field (required before too long)', () => {
    const issues = [
      issue('seed'),
      issue('prompt', 'Prompt is required'),
      issue('prompt', 'Prompt must be less than 2000 characters'),
    ];
    expect(firstIssueMessage({ issues })).toBe('Prompt is required');
    expect(
      firstIssue({ issues: [issue('model', 'one'), issue('model', 'two'), issue('model', 'three')] })?.message,
    ).toBe('one');
  });

  it('puts an issue about the whole body (not an object: no prompt) before any field', () => {
    expect(firstIssueMessage({ issues: [issue('seed'), issue(undefined, 'Prompt is required')] })).toBe(
      'Prompt is required',
    );
    expect(firstIssueMessage({ issues: [issue('prompt'), issue(undefined, 'whole')] })).toBe('whole');
  });

  it('puts fields SPEC does not rank after the ranked ones, in their own order', () => {
    expect(firstIssueMessage({ issues: [issue('extra'), issue('style_preset')] })).toBe('style_preset is wrong');
    expect(firstIssueMessage({ issues: [issue('extra'), issue('other')] })).toBe('extra is wrong');
    expect(firstIssueMessage({ issues: [{ path: [0], message: 'numeric' }, issue('model')] })).toBe('model is wrong');
  });

  it('falls back to the SPEC 8 generic text when there is no issue', () => {
    expect(firstIssue({ issues: [] })).toBeUndefined();
    expect(firstIssueMessage({ issues: [] })).toBe('Please check your input');
  });

  it('reports rule order for real schema failures with every field wrong', () => {
    const allWrong = { prompt: '', negative_prompt: 'n'.repeat(2001), seed: -1, aspect_ratio: 'x', model: 'y' };
    expect(firstMessage(sd3GenerationBodySchema, allWrong)).toBe(M.promptRequired);
    expect(firstMessage(sd3GenerationBodySchema, { ...allWrong, prompt: 'a' })).toBe(M.negativeTooLong);
    expect(firstMessage(sd3GenerationBodySchema, { ...allWrong, prompt: 'a', negative_prompt: null })).toBe(M.seed);
    expect(
      firstMessage(originalGenerationBodySchema, {
        style_preset: 'bad',
        height: 1024,
        width: 1,
        seed: 'x',
        prompt: 'a',
      }),
    ).toBe(M.seed);
    expect(firstMessage(originalGenerationBodySchema, { style_preset: 'bad', height: 1024, prompt: 'a' })).toBe(
      M.sizeRequired,
    );
  });
});

describe('buildGenerationRequest', () => {
  it('builds the SPEC section 7 payload for each model and leaves empty optionals out', () => {
    expect(
      buildGenerationRequest({ model: 'original', prompt: 'p', size: '832x1216', seed: '', negativePrompt: '' }),
    ).toEqual({
      endpoint: '/api/stability/text-to-image',
      body: { prompt: 'p', width: 832, height: 1216 },
    });
    expect(
      buildGenerationRequest({ model: 'ultra', prompt: 'p', aspectRatio: '16:9', seed: '42', negativePrompt: 'n' }),
    ).toEqual({
      endpoint: '/api/stability-ultra/generate',
      body: { prompt: 'p', aspect_ratio: '16:9', seed: 42, negative_prompt: 'n' },
    });
    expect(buildGenerationRequest({ model: 'core', prompt: 'p', aspectRatio: '1:1', stylePreset: 'anime' })).toEqual({
      endpoint: '/api/stability-core/generate',
      body: { prompt: 'p', aspect_ratio: '1:1', style_preset: 'anime' },
    });
    expect(
      buildGenerationRequest({ model: 'sd3', prompt: 'p', aspectRatio: '2:3', sd3Model: 'sd3.5-medium', seed: 0 }),
    ).toEqual({
      endpoint: '/api/stability-sd3/generate',
      body: { prompt: 'p', aspect_ratio: '2:3', model: 'sd3.5-medium', seed: 0 },
    });
  });

  it("sends only the options the chosen model takes (SPEC 7), with the form's leftovers dropped", () => {
    const leftovers = { stylePreset: 'anime', sd3Model: 'sd3.5-medium', aspectRatio: '16:9', size: '832x1216' };
    expect(buildGenerationRequest({ model: 'ultra', prompt: 'p', ...leftovers }).body).toEqual({
      prompt: 'p',
      aspect_ratio: '16:9',
    });
    expect(buildGenerationRequest({ model: 'core', prompt: 'p', ...leftovers }).body).toEqual({
      prompt: 'p',
      aspect_ratio: '16:9',
      style_preset: 'anime',
    });
    expect(buildGenerationRequest({ model: 'sd3', prompt: 'p', ...leftovers }).body).toEqual({
      prompt: 'p',
      aspect_ratio: '16:9',
      model: 'sd3.5-medium',
    });
    // original has the form's style preset too (SPEC 2), and a size, not a ratio.
    expect(buildGenerationRequest({ model: 'original', prompt: 'p', ...leftovers }).body).toEqual({
      prompt: 'p',
      width: 832,
      height: 1216,
      style_preset: 'anime',
    });
  });

  it("falls back to the first of SPEC 3's ratios and variants when none is chosen", () => {
    expect(buildGenerationRequest({ model: 'ultra', prompt: 'p' }).body).toEqual({ prompt: 'p', aspect_ratio: '1:1' });
    expect(buildGenerationRequest({ model: 'sd3', prompt: 'p' }).body).toEqual({
      prompt: 'p',
      aspect_ratio: '1:1',
      model: 'sd3.5-large',
    });
    expect(parseSdxlSize(' 1024x1024 ')).toEqual({ width: 1024, height: 1024 });
  });

  it('checks the style preset of the models whose form offers one (original and core)', () => {
    const bogus = { prompt: 'p', stylePreset: 'vaporwave', size: '1024x1024', aspectRatio: '1:1' };
    expect(validateGeneration({ model: 'original', ...bogus }, 100)).toMatch(/^Style preset must be one of /);
    expect(validateGeneration({ model: 'core', ...bogus }, 100)).toMatch(/^Style preset must be one of /);
    // ultra and sd3 take no preset: a leftover one is ignored.
    expect(validateGeneration({ model: 'ultra', ...bogus }, 100)).toBeNull();
  });

  it('falls back to the first SDXL size, 1024x1024, when none is chosen (SPEC 5)', () => {
    expect(buildGenerationRequest({ model: 'original', prompt: 'p' }).body).toEqual({
      prompt: 'p',
      width: 1024,
      height: 1024,
    });
  });

  it('produces bodies its own schemas accept', () => {
    const inputs: GenerationInput[] = [
      { model: 'original', prompt: 'p', size: '1536x640', stylePreset: 'origami', seed: 9 },
      { model: 'ultra', prompt: 'p', aspectRatio: '9:16' },
      { model: 'core', prompt: 'p', aspectRatio: '5:4', stylePreset: 'none' },
      { model: 'sd3', prompt: 'p', aspectRatio: '3:2', sd3Model: 'sd3.5-large' },
    ];
    for (const input of inputs) {
      const { body } = buildGenerationRequest(input);
      expect(generationBodySchemas[input.model].safeParse(body).success).toBe(true);
    }
  });
});
