import { describe, expect, it } from 'vitest';
import { portraitRu } from '../../src/i18n/locales/portrait.ru';
import {
  DEFAULT_PORTRAIT_ASPECT_RATIO,
  isPortraitOutputFormat,
  PORTRAIT_ASPECT_RATIOS,
  PORTRAIT_COST,
  PORTRAIT_FALLBACK_FILE_SIZE,
  PORTRAIT_SCREEN_OUTPUT_FORMAT,
  PORTRAIT_SCREEN_STYLE_PRESET,
  UPLOAD_ACCEPT,
  UPLOAD_MAX_BYTES,
  UPLOAD_MAX_MEGAPIXELS,
  type PortraitProblem,
  fileTooLargeMessage,
  isPortraitAspectRatio,
  portraitImageOf,
  portraitMessages,
  portraitMimeType,
  uploadProblem,
  validatePortrait,
} from '../../src/domain/portraits';

const MB = 1024 * 1024;

describe('portrait constants (SPEC sections 2, 7 and 9)', () => {
  it('costs 12 tokens', () => {
    expect(PORTRAIT_COST).toBe(12);
  });

  it('offers the six aspect ratios and no others', () => {
    expect(PORTRAIT_ASPECT_RATIOS).toEqual(['1:1', '16:9', '2:3', '3:2', '4:5', '5:4']);
    for (const ratio of PORTRAIT_ASPECT_RATIOS) expect(isPortraitAspectRatio(ratio)).toBe(true);
    for (const other of ['21:9', '9:16', '', 1, null]) expect(isPortraitAspectRatio(other)).toBe(false);
  });

  it('fixes style_preset to photographic and output_format to webp on the portrait screen', () => {
    expect(PORTRAIT_SCREEN_STYLE_PRESET).toBe('photographic');
    expect(PORTRAIT_SCREEN_OUTPUT_FORMAT).toBe('webp');
  });

  it('accepts uploads up to 10MB', () => {
    expect(UPLOAD_MAX_BYTES).toBe(10 * MB);
  });
});

describe('validatePortrait (SPEC section 5, in order)', () => {
  it('asks for a photo first', () => {
    expect(validatePortrait({ hasPhoto: false, prompt: '' }, 0)?.message).toBe('Please upload a photo first');
  });

  it('then asks for a prompt; blank counts as missing', () => {
    expect(validatePortrait({ hasPhoto: true, prompt: '' }, 0)?.message).toBe('Please enter a prompt');
    expect(validatePortrait({ hasPhoto: true, prompt: '   ' }, 100)?.message).toBe('Please enter a prompt');
  });

  it('then needs a balance of at least 12 tokens', () => {
    expect(validatePortrait({ hasPhoto: true, prompt: 'a knight' }, 11)?.message).toBe(
      'Insufficient tokens. You need 12 tokens for portrait generation.',
    );
    expect(validatePortrait({ hasPhoto: true, prompt: 'a knight' }, 12)).toBeNull();
    expect(validatePortrait({ hasPhoto: true, prompt: 'a knight' }, 500)).toBeNull();
  });

  it('keeps the prompt within the 2000 characters of SPEC section 9', () => {
    expect(validatePortrait({ hasPhoto: true, prompt: 'a'.repeat(2000) }, 100)).toBeNull();
    expect(validatePortrait({ hasPhoto: true, prompt: 'a'.repeat(2001) }, 100)?.message).toBe(
      'Prompt must be less than 2000 characters',
    );
  });
});

describe('uploadProblem (SPEC section 5 upload rules)', () => {
  it('accepts JPG, PNG and WebP up to 10MB', () => {
    for (const type of ['image/jpeg', 'image/jpg', 'image/png', 'image/webp']) {
      expect(uploadProblem({ size: 10 * MB, type })).toBeNull();
    }
  });

  it('rejects a file over 10MB with its size in MB', () => {
    const problem = uploadProblem({ size: 12.5 * MB, type: 'image/png' });
    expect(problem?.message).toBe('File size must be less than 10MB. Current size: 12.50 MB');
    expect(uploadProblem({ size: 10 * MB + 1, type: 'image/png' })).not.toBeNull();
    expect(fileTooLargeMessage(11 * MB)).toBe('File size must be less than 10MB. Current size: 11.00 MB');
  });

  it('rejects other types', () => {
    for (const type of ['image/gif', 'image/svg+xml', 'application/pdf', '']) {
      expect(uploadProblem({ size: 1000, type })?.message).toBe('Only JPG, PNG, and WebP formats are supported');
    }
    expect(portraitMessages.unsupportedType).toBe('Only JPG, PNG, and WebP formats are supported');
  });
});

describe('a face-swap result as an image record (SPEC section 4)', () => {
  it('carries the id, url and prompt with the defaults', () => {
    const image = portraitImageOf({ id: 7, url: 'https://api.example/images/p7.png', prompt: 'a knight' });
    expect(image).toMatchObject({
      id: 7,
      imageUrl: 'https://api.example/images/p7.png',
      prompt: 'a knight',
      model: 'Portrait generation',
      finish_reason: 'success',
      fileSize: 1_024_000,
      mimeType: 'image/png',
    });
    expect(PORTRAIT_FALLBACK_FILE_SIZE).toBe(1_024_000);
  });

  it('takes the mime type from the file extension: jpg/jpeg, png, otherwise webp', () => {
    expect(portraitMimeType('/images/a.jpg')).toBe('image/jpeg');
    expect(portraitMimeType('/images/a.JPEG')).toBe('image/jpeg');
    expect(portraitMimeType('/images/a.png')).toBe('image/png');
    expect(portraitMimeType('/images/a.webp')).toBe('image/webp');
    expect(portraitMimeType('/images/a.gif')).toBe('image/webp');
    expect(portraitMimeType('/images/a')).toBe('image/webp');
  });
});

describe('portrait problems as the screen words them in Russian (SPEC 1: ru is the default)', () => {
  // The screen words a problem by its code (portrait:errors.<code>) with its values.
  const worded = (problem: PortraitProblem | null) => {
    expect(problem).not.toBeNull();
    const { code, details = {} } = problem as PortraitProblem;
    const text = (portraitRu.errors as Record<string, string>)[code];
    expect(text, code).toBeTruthy();
    for (const [, name] of (text ?? '').matchAll(/\{\{(\w+)\}\}/g))
      expect(details, `${code}: ${name}`).toHaveProperty(name as string);
    return problem as PortraitProblem;
  };

  it('gives each SPEC 5 portrait rule its own code', () => {
    expect(worded(validatePortrait({ hasPhoto: false, prompt: 'a' }, 100)).code).toBe('PHOTO_REQUIRED');
    expect(worded(validatePortrait({ hasPhoto: true, prompt: ' ' }, 100)).code).toBe('PROMPT_REQUIRED');
    expect(worded(validatePortrait({ hasPhoto: true, prompt: 'a' }, 11))).toEqual({
      code: 'INSUFFICIENT_TOKENS',
      message: portraitMessages.insufficientTokens,
      details: { cost: 12, balance: 11 },
    });
    expect(worded(uploadProblem({ size: 10.5 * MB, type: 'image/png' }))).toEqual({
      code: 'UPLOAD_TOO_LARGE',
      message: 'File size must be less than 10MB. Current size: 10.50 MB',
      details: { sizeMb: '10.50', maxMb: 10 },
    });
    expect(worded(uploadProblem({ size: MB, type: 'image/gif' })).code).toBe('UPLOAD_UNSUPPORTED_TYPE');
  });

  it('says how long a prompt may be when it is too long', () => {
    const problem = validatePortrait({ hasPhoto: true, prompt: 'x'.repeat(2001) }, 100);
    expect(problem).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Prompt must be less than 2000 characters',
      details: { max: 2000 },
    });
  });
});

describe('portrait options', () => {
  it("start at 1:1, the first of SPEC 2's ratios", () => {
    expect(DEFAULT_PORTRAIT_ASPECT_RATIO).toBe(PORTRAIT_ASPECT_RATIOS[0]);
    expect(DEFAULT_PORTRAIT_ASPECT_RATIO).toBe('1:1');
  });

  it('take webp, png and jpeg as output formats', () => {
    for (const format of ['webp', 'png', 'jpeg']) expect(isPortraitOutputFormat(format)).toBe(true);
    for (const format of ['gif', 'jpg', 'WEBP', '', undefined, 1]) expect(isPortraitOutputFormat(format)).toBe(false);
  });

  it('let the picker offer the SPEC 5 types', () => {
    const accepted = UPLOAD_ACCEPT.split(',');
    for (const type of ['image/jpeg', 'image/png', 'image/webp', '.jpg', '.jpeg', '.png', '.webp']) {
      expect(accepted).toContain(type);
    }
  });

  it('refuse photos over 50 megapixels, and say so in megapixels', () => {
    expect(UPLOAD_MAX_MEGAPIXELS).toBe(50);
    expect(portraitMessages.tooManyPixels).toContain('50 megapixels');
  });
});

describe('a face-swap result address', () => {
  it('names the file after the last part of the address, without its query', () => {
    expect(portraitImageOf({ id: 1, url: 'https://api.example/images/p7.png?v=2', prompt: 'p' }).fileName).toBe(
      'p7.png',
    );
    expect(portraitImageOf({ id: 1, url: 'https://api.example/images/p7.jpg', prompt: 'p' }).fileName).toBe('p7.jpg');
  });

  it('reads the extension before a query or fragment', () => {
    expect(portraitMimeType('https://api.example/images/a.png?v=2')).toBe('image/png');
    expect(portraitMimeType('https://api.example/images/a.jpg#x')).toBe('image/jpeg');
  });
});
