import type { ImageModelId, OutputFormat } from '../../../src/domain/images';

export type { ImageModelId, OutputFormat } from '../../../src/domain/images';

export type ImageMimeType = 'image/png' | 'image/jpeg' | 'image/webp';

/** One text-to-image generation, already validated by the route's body schema. */
export interface ImageJob {
  model: ImageModelId;
  prompt: string;
  negativePrompt?: string;
  seed?: number;
  /** original only: one of the nine SDXL sizes. */
  width?: number;
  height?: number;
  /** ultra, core, sd3. */
  aspectRatio?: string;
  stylePreset?: string;
  /** sd3 only: sd3.5-large | sd3.5-large-turbo | sd3.5-medium. */
  sd3Model?: string;
  outputFormat: OutputFormat;
  /** Aborts the call, e.g. when the server shuts down. */
  signal?: AbortSignal;
}

export interface ImageResult {
  bytes: Buffer;
  mimeType: ImageMimeType;
  /** Read from the encoded bytes, not taken from the request. */
  width: number;
  height: number;
  /** The seed actually used (Stability picks one when none or 0 was sent). */
  seed: number;
  /** CONTENT_FILTERED images are delivered (blurred by the provider), not failed. */
  finishReason: 'SUCCESS' | 'CONTENT_FILTERED';
  engine: 'stability' | 'offline';
}

export interface ImageProvider {
  readonly name: string;
  generate(job: ImageJob): Promise<ImageResult>;
}

export type ImageProviderErrorKind = 'timeout' | 'http' | 'malformed' | 'network';

/**
 * A provider call that produced no usable image. Only the kinds below exist so callers
 * can decide on refunds and wording without parsing messages.
 */
export class ImageProviderError extends Error {
  readonly kind: ImageProviderErrorKind;
  /** The provider's HTTP status, for kind 'http' (and 'malformed' when known). */
  readonly status?: number;
  /** The provider's own message text, when its error body carried one. */
  readonly providerMessage?: string;
  /** The provider's error name, e.g. content_moderation or payment_required. */
  readonly providerCode?: string;

  constructor(
    kind: ImageProviderErrorKind,
    message: string,
    options: { status?: number; providerMessage?: string; providerCode?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ImageProviderError';
    this.kind = kind;
    this.status = options.status;
    this.providerMessage = options.providerMessage;
    this.providerCode = options.providerCode;
  }
}

export function isImageProviderError(error: unknown): error is ImageProviderError {
  return error instanceof ImageProviderError;
}

export const MIME_TYPES: Record<OutputFormat, ImageMimeType> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};
