import type { AspectRatio, ImageModelId, ImageSize } from '../../../src/domain/images';

/**
 * Pixel sizes per aspect ratio, the same for the offline renderer as for Stability
 * (PROVIDERS.md: ultra and sd3 about 1 MP, core about 1.5 MP). All are multiples of 64.
 * The 1 MP row is the SDXL/SD3 training bucket set, which is what Stability returns for
 * these ratios; the 1.5 MP row picks, per ratio, the multiple-of-64 pair closest to
 * 1.5 MP and to the ratio.
 *
 * | ratio | ultra, sd3 (~1 MP) | core (~1.5 MP) |
 * |-------|--------------------|----------------|
 * | 1:1   | 1024x1024          | 1280x1280      |
 * | 16:9  | 1344x768           | 1664x960       |
 * | 21:9  | 1536x640           | 1920x832       |
 * | 2:3   | 832x1216           | 1024x1536      |
 * | 3:2   | 1216x832           | 1536x1024      |
 * | 4:5   | 896x1088           | 1152x1408      |
 * | 5:4   | 1088x896           | 1408x1152      |
 * | 9:16  | 768x1344           | 960x1664       |
 * | 9:21  | 640x1536           | 832x1920       |
 */
const ONE_MEGAPIXEL: Record<AspectRatio, ImageSize> = {
  '1:1': { width: 1024, height: 1024 },
  '16:9': { width: 1344, height: 768 },
  '21:9': { width: 1536, height: 640 },
  '2:3': { width: 832, height: 1216 },
  '3:2': { width: 1216, height: 832 },
  '4:5': { width: 896, height: 1088 },
  '5:4': { width: 1088, height: 896 },
  '9:16': { width: 768, height: 1344 },
  '9:21': { width: 640, height: 1536 },
};

const ONE_AND_A_HALF_MEGAPIXEL: Record<AspectRatio, ImageSize> = {
  '1:1': { width: 1280, height: 1280 },
  '16:9': { width: 1664, height: 960 },
  '21:9': { width: 1920, height: 832 },
  '2:3': { width: 1024, height: 1536 },
  '3:2': { width: 1536, height: 1024 },
  '4:5': { width: 1152, height: 1408 },
  '5:4': { width: 1408, height: 1152 },
  '9:16': { width: 960, height: 1664 },
  '9:21': { width: 832, height: 1920 },
};

export const ASPECT_RATIO_PIXEL_SIZES: Record<Exclude<ImageModelId, 'original'>, Record<AspectRatio, ImageSize>> = {
  ultra: ONE_MEGAPIXEL,
  core: ONE_AND_A_HALF_MEGAPIXEL,
  sd3: ONE_MEGAPIXEL,
};

export function aspectRatioPixelSize(model: Exclude<ImageModelId, 'original'>, ratio: AspectRatio): ImageSize {
  return ASPECT_RATIO_PIXEL_SIZES[model][ratio];
}
