import type sharpModule from 'sharp';

/** The picture both sides of the generation benchmark encode: 1024x1024 noise, as PNG. */
export const BENCH_IMAGE_SIZE = 1024;

export function benchPixels(sharp: typeof sharpModule): Promise<Buffer> {
  return sharp({
    create: {
      width: BENCH_IMAGE_SIZE,
      height: BENCH_IMAGE_SIZE,
      channels: 3,
      background: '#6d28d9',
      noise: { type: 'gaussian', mean: 120, sigma: 40 },
    },
  })
    .raw()
    .toBuffer();
}

export function encodeBenchImage(sharp: typeof sharpModule, pixels: Buffer): Promise<Buffer> {
  return sharp(pixels, { raw: { width: BENCH_IMAGE_SIZE, height: BENCH_IMAGE_SIZE, channels: 3 } })
    .png()
    .toBuffer();
}
