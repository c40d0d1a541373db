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
  /**
   * Aborts the call: the service's deadline, the client gone, the server shutting down.
   * A provider stops its paid work at the provider before it settles.
   */
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
  | 'failed'
  /** We stopped waiting (the client went away, the server is shutting down); the prediction was cancelled. */
  | 'aborted';

/** A provider call that produced no usable portrait; the charge is refunded. */
export class PortraitProviderError extends Error {
  readonly kind: PortraitProviderErrorKind;
  readonly status?: number;
  /** The provider's own text (an error detail or a prediction's error). */
  readonly providerMessage?: string;
  /** The answer's Retry-After header, as sent. */
  readonly retryAfter?: string;

  constructor(
    kind: PortraitProviderErrorKind,
    message: string,
    options: { status?: number; providerMessage?: string; retryAfter?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'PortraitProviderError';
    this.kind = kind;
    this.status = options.status;
    this.providerMessage = options.providerMessage;
    this.retryAfter = options.retryAfter;
  }
}

export function isPortraitProviderError(error: unknown): error is PortraitProviderError {
  return error instanceof PortraitProviderError;
}
