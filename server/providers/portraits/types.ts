import type { PortraitAspectRatio, PortraitOutputFormat } from '../../../src/domain/portraits';
import type { ImageMimeType } from '../images/types';

/** One portrait: the user's photo (already decoded and re-encoded by us) and the description. */
export interface PortraitJob {
  photo: { bytes: Buffer; mimeType: ImageMimeType; width: number; height: number };
  prompt: string;
  aspectRatio: PortraitAspectRatio;
  /** SPEC: the portrait screen sends photographic; absent when the request has none. */
  stylePreset?: string;
  outputFormat: PortraitOutputFormat;
  /** Aborts the call (the service's deadline). */
  signal?: AbortSignal;
}

export interface PortraitResult {
  bytes: Buffer;
  mimeType: ImageMimeType;
  /** Read from the encoded bytes, not taken from the request. */
  width: number;
  height: number;
  engine: 'replicate' | 'offline';
}

export interface PortraitProvider {
  readonly name: string;
  create(job: PortraitJob): Promise<PortraitResult>;
}

export type PortraitProviderErrorKind =
  /** No answer in time (the prediction was cancelled). */
  | 'timeout'
  /** The provider answered an HTTP error. */
  | 'http'
  /** The provider's answer or the delivered file made no sense. */
  | 'malformed'
  | 'network'
  /** The prediction ended as failed or canceled on the provider's side. */
  | 'failed';

/** A provider call that produced no usable portrait; the charge is refunded. */
export class PortraitProviderError extends Error {
  readonly kind: PortraitProviderErrorKind;
  readonly status?: number;
  /** The provider's own text (an error detail or a prediction's error). */
  readonly providerMessage?: string;

  constructor(
    kind: PortraitProviderErrorKind,
    message: string,
    options: { status?: number; providerMessage?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'PortraitProviderError';
    this.kind = kind;
    this.status = options.status;
    this.providerMessage = options.providerMessage;
  }
}

export function isPortraitProviderError(error: unknown): error is PortraitProviderError {
  return error instanceof PortraitProviderError;
}
