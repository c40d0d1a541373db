import { describe, expect, it } from 'vitest';
import {
  IMAGE_MODELS,
  isAspectRatio,
  isImageModelId,
  isSd3Variant,
  isStylePreset,
  parseSdxlSize,
} from '../../src/domain/image-catalogue';

/** SPEC section 3, "Image model catalogue": each model's options. */
describe('model options', () => {
  it('gives original an image size and the others an aspect ratio', () => {
    expect(IMAGE_MODELS.original.dimension).toBe('size');
    expect(IMAGE_MODELS.ultra.dimension).toBe('aspectRatio');
    expect(IMAGE_MODELS.core.dimension).toBe('aspectRatio');
    expect(IMAGE_MODELS.sd3.dimension).toBe('aspectRatio');
  });

  it('offers style presets on core, not on ultra or sd3', () => {
    expect(IMAGE_MODELS.core.hasStylePresets).toBe(true);
    expect(IMAGE_MODELS.ultra.hasStylePresets).toBe(false);
    expect(IMAGE_MODELS.sd3.hasStylePresets).toBe(false);
  });

  it('offers model variants on sd3 only', () => {
    expect(IMAGE_MODELS.sd3.hasVariants).toBe(true);
    expect(IMAGE_MODELS.original.hasVariants).toBe(false);
    expect(IMAGE_MODELS.ultra.hasVariants).toBe(false);
    expect(IMAGE_MODELS.core.hasVariants).toBe(false);
  });

  it('supports WebP on original and not on sd3', () => {
    expect(IMAGE_MODELS.original.outputFormats).toContain('webp');
    expect(IMAGE_MODELS.sd3.outputFormats).not.toContain('webp');
  });
});

describe('catalogue membership', () => {
  it('knows the four model ids and nothing else', () => {
    for (const id of ['original', 'ultra', 'core', 'sd3']) expect(isImageModelId(id)).toBe(true);
    for (const other of ['sdxl', 'ORIGINAL', '', 2, null, undefined]) expect(isImageModelId(other)).toBe(false);
  });

  it('knows the aspect ratios, style presets and SD3 variants and nothing else', () => {
    expect(isAspectRatio('21:9')).toBe(true);
    for (const other of ['1:2', '', 1, null]) expect(isAspectRatio(other)).toBe(false);
    expect(isStylePreset('neon-punk')).toBe(true);
    for (const other of ['neon punk', '', 0, null]) expect(isStylePreset(other)).toBe(false);
    expect(isSd3Variant('sd3.5-medium')).toBe(true);
    for (const other of ['sd3.5-small', '', 3, null]) expect(isSd3Variant(other)).toBe(false);
  });

  it('reads a size only when it is one of the nine, written WIDTHxHEIGHT', () => {
    expect(parseSdxlSize('1024x1024')).toEqual({ width: 1024, height: 1024 });
    for (const other of ['x1024x1024', '1024x1024px', '1024 x 1024', '1024x1024x1']) {
      expect(parseSdxlSize(other)).toBeNull();
    }
  });
});
