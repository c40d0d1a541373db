import sharp from 'sharp';
import type { ProviderErrorKind } from '../../metrics';
import { assertValidJob, effectiveStylePreset } from './job';
import {
  ImageProviderError,
  MIME_TYPES,
  type ImageJob,
  type ImageProvider,
  type ImageResult,
  type OutputFormat,
} from './types';

/**
 * Stability AI adapter (PROVIDERS.md): model original goes to the v1 SDXL text-to-image
 * JSON API, ultra/core/sd3 to the v2beta stable-image multipart API. Both answer either
 * with raw bytes plus finish-reason/seed headers or with JSON carrying base64; this
 * adapter asks for one (`accept`) but reads whichever arrives, going by content-type.
 */

export interface StabilityImageProviderOptions {
  apiKey: string;
  baseUrl?: string;
  /** Covers the whole call, body download included. */
  timeoutMs: number;
  /** 'image' asks for raw bytes (smaller, no base64), 'json' for the JSON envelope. */
  accept?: 'image' | 'json';
  fetch?: typeof fetch;
}

export const STABILITY_V1_TEXT_TO_IMAGE_PATH = '/v1/generation/stable-diffusion-xl-1024-v1-0/text-to-image';
export const stabilityV2Path = (model: 'ultra' | 'core' | 'sd3'): string => `/v2beta/stable-image/generate/${model}`;

// SPEC does not expose these to users; they are the SDXL defaults the old app used.
const V1_STEPS = 30;
const V1_CFG_SCALE = 7;

interface RawOutcome {
  bytes: Buffer;
  finishReason: string | undefined;
  seed: number | undefined;
}

export function createStabilityImageProvider(options: StabilityImageProviderOptions): ImageProvider {
  const baseUrl = (options.baseUrl ?? 'https://api.stability.ai').replace(/\/+$/, '');
  const accept = options.accept ?? 'image';
  const fetchImpl = options.fetch ?? fetch;

  return {
    name: 'stability',
    async generate(job: ImageJob): Promise<ImageResult> {
      assertValidJob(job);
      const request = job.model === 'original' ? v1Request(job, accept) : v2Request(job, job.model, accept);
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = job.signal ? AbortSignal.any([timeout, job.signal]) : timeout;

      let response: Response;
      let body: Buffer;
      try {
        response = await fetchImpl(`${baseUrl}${request.path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.apiKey}`, accept: request.accept, ...request.headers },
          body: request.body,
          signal,
        });
        body = Buffer.from(await response.arrayBuffer());
      } catch (error) {
        // The caller's own abort is not a provider failure: hand its reason back unchanged.
        if (job.signal?.aborted) throw job.signal.reason;
        if (timeout.aborted) {
          throw new ImageProviderError('timeout', `Stability did not answer within ${options.timeoutMs} ms`, {
            cause: error,
          });
        }
        throw new ImageProviderError('network', `Could not reach Stability: ${describe(error)}`, { cause: error });
      }

      if (!response.ok) throw httpError(response.status, body);
      const outcome = readSuccess(job, response, body);
      return finish(job, outcome, response.status);
    },
  };
}

interface PreparedRequest {
  path: string;
  accept: string;
  headers: Record<string, string>;
  body: string | FormData;
}

function v1Request(job: ImageJob, accept: 'image' | 'json'): PreparedRequest {
  const style = effectiveStylePreset(job);
  const negative = job.negativePrompt?.trim() ? job.negativePrompt : undefined;
  const payload = {
    text_prompts: [{ text: job.prompt, weight: 1 }, ...(negative ? [{ text: negative, weight: -1 }] : [])],
    width: job.width,
    height: job.height,
    samples: 1,
    steps: V1_STEPS,
    cfg_scale: V1_CFG_SCALE,
    ...(job.seed !== undefined ? { seed: job.seed } : {}),
    ...(style ? { style_preset: style } : {}),
  };
  return {
    path: STABILITY_V1_TEXT_TO_IMAGE_PATH,
    accept: accept === 'json' ? 'application/json' : 'image/png',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  };
}

function v2Request(job: ImageJob, model: 'ultra' | 'core' | 'sd3', accept: 'image' | 'json'): PreparedRequest {
  const form = new FormData();
  form.append('prompt', job.prompt);
  if (job.negativePrompt?.trim()) form.append('negative_prompt', job.negativePrompt);
  form.append('aspect_ratio', job.aspectRatio ?? '1:1');
  if (job.seed !== undefined) form.append('seed', String(job.seed));
  form.append('output_format', job.outputFormat);
  const style = effectiveStylePreset(job);
  if (model === 'core' && style) form.append('style_preset', style);
  if (model === 'sd3') {
    form.append('model', job.sd3Model ?? 'sd3.5-large');
    form.append('mode', 'text-to-image');
  }
  // No content-type header: fetch writes it with the multipart boundary.
  return {
    path: stabilityV2Path(model),
    accept: accept === 'json' ? 'application/json' : 'image/*',
    headers: {},
    body: form,
  };
}

function readSuccess(job: ImageJob, response: Response, body: Buffer): RawOutcome {
  const contentType = (response.headers.get('content-type') ?? '').toLowerCase();
  if (contentType.startsWith('image/')) {
    return {
      bytes: body,
      finishReason: response.headers.get('finish-reason') ?? undefined,
      seed: parseSeedValue(response.headers.get('seed')),
    };
  }
  if (!contentType.includes('json')) {
    throw malformed(`Stability answered with unexpected content-type "${contentType || 'none'}"`, response.status);
  }
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw malformed('Stability answered with invalid JSON', response.status, error);
  }
  if (!isRecord(json)) throw malformed('Stability answered with a JSON value that is not an object', response.status);

  if (job.model === 'original') {
    const artifacts: unknown = json.artifacts;
    const artifact: unknown = Array.isArray(artifacts) ? (artifacts as unknown[])[0] : undefined;
    if (!isRecord(artifact) || typeof artifact.base64 !== 'string' || artifact.base64 === '') {
      throw malformed('Stability answered without an image artifact', response.status);
    }
    return {
      bytes: Buffer.from(artifact.base64, 'base64'),
      finishReason: typeof artifact.finishReason === 'string' ? artifact.finishReason : undefined,
      seed: parseSeedValue(artifact.seed),
    };
  }
  if (typeof json.image !== 'string' || json.image === '') {
    throw malformed('Stability answered without an image', response.status);
  }
  return {
    bytes: Buffer.from(json.image, 'base64'),
    finishReason: typeof json.finish_reason === 'string' ? json.finish_reason : undefined,
    seed: parseSeedValue(json.seed),
  };
}

async function finish(job: ImageJob, outcome: RawOutcome, status: number): Promise<ImageResult> {
  const finishReason = outcome.finishReason?.toUpperCase() ?? 'SUCCESS';
  if (finishReason !== 'SUCCESS' && finishReason !== 'CONTENT_FILTERED') {
    throw malformed(`Stability finished with ${finishReason}`, status);
  }

  let format: OutputFormat;
  let width: number;
  let height: number;
  try {
    const metadata = await sharp(outcome.bytes).metadata();
    // A header can be fine while the data is cut short; decode it all before storing it.
    await sharp(outcome.bytes, { failOn: 'error' }).raw().toBuffer();
    const detected = metadata.format;
    if (detected !== 'png' && detected !== 'jpeg' && detected !== 'webp') {
      throw new Error(`unsupported image format ${String(metadata.format)}`);
    }
    format = detected;
    width = metadata.width;
    height = metadata.height;
  } catch (error) {
    throw malformed(`Stability answered with an image that cannot be decoded: ${describe(error)}`, status, error);
  }

  // v1 only ever sends PNG; SPEC still offers WebP and JPEG for original.
  const bytes =
    format === job.outputFormat ? outcome.bytes : await sharp(outcome.bytes).toFormat(job.outputFormat).toBuffer();

  return {
    bytes,
    mimeType: MIME_TYPES[job.outputFormat],
    width,
    height,
    seed: outcome.seed ?? job.seed ?? 0,
    finishReason,
    engine: 'stability',
  };
}

/**
 * v1 errors carry `{id, name, message}`, v2beta ones `{id, name, errors: [...]}`. Either
 * shape is read from either API, since proxies and gateways do not always keep to one.
 */
function httpError(status: number, body: Buffer): ImageProviderError {
  const { message, code } = providerErrorDetails(body);
  return new ImageProviderError('http', `Stability answered ${status}${message ? `: ${message}` : ''}`, {
    status,
    providerMessage: message,
    providerCode: code,
  });
}

export function providerErrorDetails(body: Buffer): { message?: string; code?: string } {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    // HTML from a proxy or an empty body: nothing that is the provider's own wording.
    return {};
  }
  if (!isRecord(json)) return {};
  const code = typeof json.name === 'string' && json.name !== '' ? json.name : undefined;
  if (typeof json.message === 'string' && json.message.trim() !== '') return { message: json.message.trim(), code };
  if (Array.isArray(json.errors)) {
    const texts = json.errors.filter((e): e is string => typeof e === 'string' && e.trim() !== '');
    if (texts.length > 0) return { message: texts.join('; '), code };
  }
  return { message: code, code };
}

function malformed(message: string, status: number, cause?: unknown): ImageProviderError {
  return new ImageProviderError('malformed', message, { status, cause });
}

function parseSeedValue(value: unknown): number | undefined {
  const seed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof seed === 'number' && Number.isInteger(seed) && seed >= 0 ? seed : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

/**
 * The kind a failed Stability call is counted under in imagegen_provider_errors_total:
 * 429 rate_limited, 5xx server_error, 402 (our account out of credits) quota, any other
 * 4xx (400, 401, 403 incl. content_moderation, 413, 422) refused, an unusable 200
 * invalid_response.
 */
export function stabilityErrorKind(error: ImageProviderError): ProviderErrorKind {
  switch (error.kind) {
    case 'timeout':
      return 'timeout';
    case 'network':
      return 'network';
    case 'malformed':
      return 'invalid_response';
    case 'http': {
      const status = error.status ?? 0;
      if (status === 429) return 'rate_limited';
      if (status === 402) return 'quota';
      if (status >= 500) return 'server_error';
      return 'refused';
    }
  }
}
