import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ASPECT_RATIOS, SDXL_SIZES, STYLE_PRESETS, type OutputFormat } from '../../../../src/domain/images';
import { AppError } from '../../../../server/errors';
import {
  ASPECT_RATIO_PIXEL_SIZES,
  createOfflineImageProvider,
  isOfflineRender,
  OFFLINE_MARK,
} from '../../../../server/providers/images/offline';
import type { ImageJob } from '../../../../server/providers/images/types';

const provider = createOfflineImageProvider();

const base: ImageJob = {
  model: 'core',
  prompt: 'A lighthouse on a cliff at dusk',
  aspectRatio: '1:1',
  outputFormat: 'png',
  seed: 7,
};

describe('offline image provider', () => {
  it('is named offline and reports itself as the offline engine', async () => {
    expect(provider.name).toBe('offline');
    const result = await provider.generate(base);
    expect(result.engine).toBe('offline');
    expect(result.finishReason).toBe('SUCCESS');
    expect(result.seed).toBe(7);
  });

  it('gives identical bytes for identical jobs', async () => {
    for (const job of [
      base,
      {
        ...base,
        model: 'original',
        width: 1152,
        height: 896,
        aspectRatio: undefined,
        stylePreset: 'pixel-art',
      } as ImageJob,
      { ...base, model: 'ultra', outputFormat: 'webp' } as ImageJob,
      { ...base, model: 'sd3', sd3Model: 'sd3.5-medium', outputFormat: 'jpeg' } as ImageJob,
    ]) {
      const first = await provider.generate(job);
      const second = await provider.generate({ ...job });
      expect(second.bytes.equals(first.bytes)).toBe(true);
    }
  });

  it('draws a different picture for a different seed, prompt, model, style or size', async () => {
    const reference = (await provider.generate(base)).bytes;
    const variants: ImageJob[] = [
      { ...base, seed: 8 },
      { ...base, prompt: 'A lighthouse on a cliff at dawn' },
      { ...base, model: 'ultra' },
      { ...base, stylePreset: 'anime' },
      { ...base, aspectRatio: '16:9' },
    ];
    for (const job of variants) {
      const other = (await provider.generate(job)).bytes;
      expect(other.equals(reference)).toBe(false);
    }
  });

  // Stability's v1 and v2beta references: a seed of 0 or none means a random seed, and the
  // response (the `seed` header, artifacts[].seed) says which was used.
  it('picks a new random seed when none (or 0) is given, and says which it used', async () => {
    const job: ImageJob = { ...base, seed: undefined };
    const results = [
      await provider.generate(job),
      await provider.generate(job),
      await provider.generate({ ...base, seed: 0 }),
    ];
    for (const result of results) {
      expect(result.seed).toBeGreaterThanOrEqual(1);
      expect(result.seed).toBeLessThanOrEqual(4294967294);
    }
    expect(new Set(results.map((r) => r.seed)).size).toBe(3);
    expect(results[1]!.bytes.equals(results[0]!.bytes)).toBe(false);
    // The seed said reproduces the picture when sent back explicitly.
    const replay = await provider.generate({ ...base, seed: results[0]!.seed });
    expect(replay.bytes.equals(results[0]!.bytes)).toBe(true);
  });

  it('renders original at exactly each of the nine SDXL sizes', async () => {
    for (const size of SDXL_SIZES) {
      const result = await provider.generate({
        model: 'original',
        prompt: 'size check',
        ...size,
        outputFormat: 'jpeg',
        seed: 1,
      });
      const metadata = await sharp(result.bytes).metadata();
      expect([result.width, result.height]).toEqual([size.width, size.height]);
      expect([metadata.width, metadata.height]).toEqual([size.width, size.height]);
    }
  });

  it('renders every ratio at the documented size for ultra, core and sd3', async () => {
    for (const model of ['ultra', 'core', 'sd3'] as const) {
      for (const ratio of ASPECT_RATIOS) {
        const result = await provider.generate({
          model,
          prompt: 'ratio check',
          aspectRatio: ratio,
          sd3Model: 'sd3.5-large',
          outputFormat: 'jpeg',
          seed: 1,
        });
        const metadata = await sharp(result.bytes).metadata();
        const expected = ASPECT_RATIO_PIXEL_SIZES[model][ratio];
        expect([metadata.width, metadata.height], `${model} ${ratio}`).toEqual([expected.width, expected.height]);
        expect([result.width, result.height]).toEqual([expected.width, expected.height]);
      }
    }
  });

  it('keeps the documented size table: about 1 MP for ultra and sd3, 1.5 MP for core, multiples of 64', () => {
    expect(ASPECT_RATIO_PIXEL_SIZES.ultra['1:1']).toEqual({ width: 1024, height: 1024 });
    expect(ASPECT_RATIO_PIXEL_SIZES.sd3['1:1']).toEqual({ width: 1024, height: 1024 });
    for (const [model, megapixels] of [
      ['ultra', 1],
      ['sd3', 1],
      ['core', 1.5],
    ] as const) {
      for (const ratio of ASPECT_RATIOS) {
        const { width, height } = ASPECT_RATIO_PIXEL_SIZES[model][ratio];
        const [a, b] = ratio.split(':').map(Number) as [number, number];
        expect(width % 64).toBe(0);
        expect(height % 64).toBe(0);
        expect(Math.abs(width / height / (a / b) - 1)).toBeLessThan(0.05);
        expect(Math.abs((width * height) / (megapixels * 1024 * 1024) - 1)).toBeLessThan(0.1);
      }
    }
  });

  it('encodes the requested format with the matching mime type for each model', async () => {
    const cases: Array<[ImageJob['model'], OutputFormat, string]> = [
      ['original', 'png', 'png'],
      ['original', 'jpeg', 'jpeg'],
      ['original', 'webp', 'webp'],
      ['ultra', 'png', 'png'],
      ['ultra', 'jpeg', 'jpeg'],
      ['ultra', 'webp', 'webp'],
      ['core', 'png', 'png'],
      ['core', 'jpeg', 'jpeg'],
      ['core', 'webp', 'webp'],
      ['sd3', 'png', 'png'],
      ['sd3', 'jpeg', 'jpeg'],
    ];
    for (const [model, outputFormat, sharpFormat] of cases) {
      const result = await provider.generate({
        model,
        prompt: 'format check',
        width: 1024,
        height: 1024,
        aspectRatio: '1:1',
        sd3Model: 'sd3.5-large',
        outputFormat,
      });
      expect(result.mimeType).toBe(`image/${outputFormat}`);
      const metadata = await sharp(result.bytes).metadata();
      expect(metadata.format).toBe(sharpFormat);
      expect(metadata.hasAlpha).toBe(false);
    }
  });

  it('refuses WebP for sd3, as the catalogue does', async () => {
    await expect(
      provider.generate({ ...base, model: 'sd3', sd3Model: 'sd3.5-large', outputFormat: 'webp' }),
    ).rejects.toSatisfy((error: unknown) => error instanceof AppError && error.code === 'VALIDATION_ERROR');
  });

  it('refuses malformed jobs with the SPEC texts', async () => {
    const cases: Array<[ImageJob, string]> = [
      [{ ...base, prompt: ' ' }, 'Prompt is required'],
      [{ ...base, prompt: 'x'.repeat(2001) }, 'Prompt must be less than 2000 characters'],
      [{ ...base, seed: 4294967296 }, 'Seed must be a number between 0 and 4294967295'],
      [{ model: 'original', prompt: 'x', outputFormat: 'png' }, 'Image size is required'],
      [{ ...base, aspectRatio: undefined }, 'Aspect ratio is required'],
      [{ ...base, model: 'sd3' }, 'Model variant is required for SD3'],
      [{ ...base, model: 'dalle' as ImageJob['model'] }, 'Unknown model: dalle'],
    ];
    for (const [job, message] of cases) {
      await expect(provider.generate(job)).rejects.toThrow(message);
    }
    await expect(
      provider.generate({ model: 'original', prompt: 'x', width: 1000, height: 1000, outputFormat: 'png' }),
    ).rejects.toThrow(/^Image size must be one of /);
  });

  it('marks the image as offline in EXIF and XMP', async () => {
    for (const outputFormat of ['png', 'jpeg', 'webp'] as const) {
      const result = await provider.generate({ ...base, outputFormat });
      const metadata = await sharp(result.bytes).metadata();
      expect(metadata.xmpAsString).toContain('imagegen:engine="offline"');
      expect(metadata.xmpAsString).toContain(OFFLINE_MARK);
      expect(metadata.exif?.toString('latin1')).toContain(`${OFFLINE_MARK}: procedural render`);
      expect(await isOfflineRender(result.bytes)).toBe(true);
    }
    const plain = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    expect(await isOfflineRender(plain)).toBe(false);
  });

  it('draws every style preset, and Cyrillic or unusual prompts', async () => {
    for (const stylePreset of STYLE_PRESETS) {
      const result = await provider.generate({ ...base, stylePreset, outputFormat: 'jpeg' });
      expect(result.width).toBe(1280);
    }
    for (const prompt of ['Котик в космосе, ёлка и щука', '猫 🐱 <svg onload="x">&amp;', 'x'.repeat(2000)]) {
      const result = await provider.generate({ ...base, prompt, outputFormat: 'jpeg' });
      expect((await sharp(result.bytes).metadata()).width).toBe(1280);
    }
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('client went away'));
    await expect(provider.generate({ ...base, signal: controller.signal })).rejects.toThrow('client went away');
  });
});
