import type { Config } from '../../config';
import { createOfflinePortraitProvider } from './offline';
import { createReplicatePortraitProvider } from './replicate';
import type { PortraitProvider } from './types';

/** Replicate when a token is configured, otherwise the offline engine (DESIGN section 6). */
export function createPortraitProvider(config: Config): PortraitProvider {
  if (!config.REPLICATE_API_TOKEN) return createOfflinePortraitProvider();
  return createReplicatePortraitProvider({
    apiToken: config.REPLICATE_API_TOKEN,
    baseUrl: config.REPLICATE_BASE_URL,
    model: config.REPLICATE_MODEL,
    inputNames: {
      prompt: config.REPLICATE_INPUT_PROMPT,
      image: config.REPLICATE_INPUT_IMAGE,
      aspectRatio: config.REPLICATE_INPUT_ASPECT_RATIO,
      outputFormat: config.REPLICATE_INPUT_OUTPUT_FORMAT,
    },
    timeoutMs: config.REPLICATE_TIMEOUT_MS,
    pollIntervalMs: config.REPLICATE_POLL_INTERVAL_MS,
    deliveryHosts: config.REPLICATE_DELIVERY_HOSTS,
  });
}
