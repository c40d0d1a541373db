import { describe, expect, it } from 'vitest';
import {
  PORTRAIT_ASPECT_RATIOS,
  PORTRAIT_COST,
  PORTRAIT_FALLBACK_FILE_SIZE,
  PORTRAIT_SCREEN_OUTPUT_FORMAT,
  PORTRAIT_SCREEN_STYLE_PRESET,
  UPLOAD_MAX_BYTES,
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
