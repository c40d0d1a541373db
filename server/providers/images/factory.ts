import type { Config } from '../../config';
import { createOfflineImageProvider } from './offline';
import { createStabilityImageProvider } from './stability';
import type { ImageProvider } from './types';

/** Stability when a key is configured, otherwise the offline renderer (DESIGN section 6). */
export function createImageProvider(
  config: Pick<Config, 'STABILITY_API_KEY' | 'STABILITY_BASE_URL' | 'STABILITY_TIMEOUT_MS'> & {
    IMAGE_OFFLINE_DELAY_MS?: number;
  },
): ImageProvider {
  if (!config.STABILITY_API_KEY) return createOfflineImageProvider({ delayMs: config.IMAGE_OFFLINE_DELAY_MS });
  return createStabilityImageProvider({
    apiKey: config.STABILITY_API_KEY,
    baseUrl: config.STABILITY_BASE_URL,
    timeoutMs: config.STABILITY_TIMEOUT_MS,
  });
}
