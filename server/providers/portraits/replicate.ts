import sharp, { type Metadata } from 'sharp';
import type { PortraitOutputFormat } from '../../../src/domain/portraits';
import { MIME_TYPES, type ImageMimeType } from '../images/types';
import { PortraitProviderError, type PortraitJob, type PortraitProvider, type PortraitResult } from './types';

/**
 * Portraits through Replicate's predictions API (PROVIDERS.md "Portraits"):
 *
 * 1. `POST /v1/models/{owner}/{name}/predictions` (or `/v1/predictions` with a version
 *    when the model is `owner/name:version`) with `Prefer: wait`, the photo as a data URI;
 * 2. while the prediction is starting or processing, poll `GET /v1/predictions/{id}` on
 *    the configured API host (never on an address from the answer);
 * 3. download the output at once (Replicate deletes it after an hour), only from the API
 *    host or a configured delivery host, over the same scheme, with a size limit and no
 *    redirects; convert it to the asked format when the model delivers another;
 * 4. past the deadline, cancel the prediction (`POST /v1/predictions/{id}/cancel`).
 *
 * The model and its input field names are configuration; the defaults are
 * black-forest-labs/flux-kontext-pro's `prompt`, `input_image`, `aspect_ratio`,
 * `output_format`. An empty field name leaves that input out.
 */

export interface ReplicateInputNames {
  prompt: string;
  image: string;
  aspectRatio: string;
  outputFormat: string;
}

export const DEFAULT_REPLICATE_MODEL = 'black-forest-labs/flux-kontext-pro';
export const DEFAULT_REPLICATE_INPUT_NAMES: ReplicateInputNames = {
  prompt: 'prompt',
  image: 'input_image',
  aspectRatio: 'aspect_ratio',
  outputFormat: 'output_format',
};
export const DEFAULT_REPLICATE_DELIVERY_HOSTS = ['replicate.delivery', '*.replicate.delivery'];

export interface ReplicateOptions {
  apiToken: string;
  baseUrl: string;
  model: string;
  inputNames?: Partial<ReplicateInputNames>;
  /** The whole call: create, wait, poll and download. */
  timeoutMs: number;
  pollIntervalMs?: number;
  /** Hosts the output may be downloaded from besides the API host; `*.` allows subdomains. */
  deliveryHosts?: string[];
  /** The largest output accepted. */
  maxOutputBytes?: number;
}

/** What a prediction looks like on the wire (only what we read). */
interface Prediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output?: unknown;
  error?: unknown;
}

const STATUSES = new Set(['starting', 'processing', 'succeeded', 'failed', 'canceled']);
const DEFAULT_POLL_MS = 1000;
const DEFAULT_MAX_OUTPUT_BYTES = 30 * 1024 * 1024;
/** Replicate holds a `Prefer: wait` request at most 60 s. */
const MAX_WAIT_S = 60;

/** flux-kontext-pro delivers jpg or png; webp is made here from a lossless png. */
const WIRE_FORMAT: Record<PortraitOutputFormat, string> = { webp: 'png', png: 'png', jpeg: 'jpg' };

export function createReplicatePortraitProvider(options: ReplicateOptions): PortraitProvider {
  const base = new URL(options.baseUrl.replace(/\/+$/, '') + '/');
  const names = { ...DEFAULT_REPLICATE_INPUT_NAMES, ...options.inputNames };
  const pollMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const deliveryHosts = (options.deliveryHosts ?? DEFAULT_REPLICATE_DELIVERY_HOSTS).map((h) => h.toLowerCase());
  const headers = {
    authorization: `Bearer ${options.apiToken}`,
    'content-type': 'application/json',
  };

  const api = (path: string) => new URL(path.replace(/^\/+/, ''), base);

  async function call(url: URL, init: RequestInit, signal: AbortSignal): Promise<Prediction> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, headers: { ...headers, ...init.headers }, signal, redirect: 'error' });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new PortraitProviderError('network', `Replicate could not be reached: ${String(error)}`, { cause: error });
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? (JSON.parse(text) as unknown) : undefined;
    } catch (error) {
      throw new PortraitProviderError(
        'malformed',
        `Replicate answered ${response.status} with a body that is not JSON`,
        {
          status: response.status,
          cause: error,
        },
      );
    }
    if (!response.ok) {
      const detail = errorDetail(body);
      throw new PortraitProviderError('http', `Replicate answered ${response.status}${detail ? `: ${detail}` : ''}`, {
        status: response.status,
        providerMessage: detail,
      });
    }
    return parsePrediction(body, response.status);
  }

  function predictionsUrl(): { url: URL; version?: string } {
    const [slug, version] = options.model.split(':');
    if (version) return { url: api('v1/predictions'), version };
    const [owner, name] = (slug ?? '').split('/');
    return { url: api(`v1/models/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}/predictions`) };
  }

  function inputOf(job: PortraitJob): Record<string, unknown> {
    const input: Record<string, unknown> = {};
    const dataUri = `data:${job.photo.mimeType};base64,${job.photo.bytes.toString('base64')}`;
    if (names.prompt) input[names.prompt] = job.prompt;
    if (names.image) input[names.image] = dataUri;
    if (names.aspectRatio) input[names.aspectRatio] = job.aspectRatio;
    if (names.outputFormat) input[names.outputFormat] = WIRE_FORMAT[job.outputFormat];
    return input;
  }

  /** Only our API host or a configured delivery host, on the API's scheme, no credentials. */
  function downloadable(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch (error) {
      throw new PortraitProviderError('malformed', 'Replicate returned an output that is not a URL', { cause: error });
    }
    const host = url.hostname.toLowerCase();
    const sameApiHost = url.host === base.host;
    const delivery = deliveryHosts.some((allowed) =>
      allowed.startsWith('*.') ? host.endsWith(allowed.slice(1)) : host === allowed,
    );
    const schemeOk = url.protocol === 'https:' || (url.protocol === base.protocol && sameApiHost);
    if (!schemeOk || !(sameApiHost || delivery) || url.username || url.password) {
      throw new PortraitProviderError('malformed', `Replicate returned an output on a host we do not download from`);
    }
    return url;
  }

  async function download(raw: string, signal: AbortSignal): Promise<Buffer> {
    const url = downloadable(raw);
    let response: Response;
    try {
      response = await fetch(url, {
        signal,
        redirect: 'error',
        // The token goes only to the API host itself.
        headers: url.host === base.host ? { authorization: headers.authorization } : {},
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new PortraitProviderError('network', 'The portrait could not be downloaded', { cause: error });
    }
    if (!response.ok || !response.body) {
      throw new PortraitProviderError('http', `The portrait download answered ${response.status}`, {
        status: response.status,
      });
    }
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) {
      await response.body.cancel();
      throw new PortraitProviderError('malformed', `The portrait is larger than ${maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of response.body) {
      total += chunk.byteLength;
      if (total > maxBytes)
        throw new PortraitProviderError('malformed', `The portrait is larger than ${maxBytes} bytes`);
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks);
  }

  async function cancel(id: string): Promise<void> {
    // A best effort with its own short deadline: the caller's has passed already.
    await fetch(api(`v1/predictions/${encodeURIComponent(id)}/cancel`), {
      method: 'POST',
      headers,
      signal: AbortSignal.timeout(5000),
      redirect: 'error',
    })
      .then((response) => response.body?.cancel())
      .catch(() => undefined);
  }

  return {
    name: 'replicate',
    async create(job: PortraitJob): Promise<PortraitResult> {
      const deadline = AbortSignal.timeout(options.timeoutMs);
      const signal = job.signal ? AbortSignal.any([job.signal, deadline]) : deadline;
      const started = Date.now();
      const { url, version } = predictionsUrl();
      let prediction: Prediction | undefined;
      try {
        // Held at most half the deadline, so the answer (and the id to cancel) comes in time.
        const waitS = Math.max(1, Math.min(MAX_WAIT_S, Math.floor(options.timeoutMs / 2000)));
        prediction = await call(
          url,
          {
            method: 'POST',
            headers: { prefer: `wait=${waitS}` },
            body: JSON.stringify({ ...(version ? { version } : {}), input: inputOf(job) }),
          },
          signal,
        );
        while (prediction.status === 'starting' || prediction.status === 'processing') {
          await sleep(pollMs, signal);
          prediction = await call(api(`v1/predictions/${encodeURIComponent(prediction.id)}`), {}, signal);
        }
        if (prediction.status !== 'succeeded') {
          const reason = typeof prediction.error === 'string' ? prediction.error : undefined;
          throw new PortraitProviderError('failed', `The prediction ended ${prediction.status}`, {
            providerMessage: reason,
          });
        }
        const output = firstOutput(prediction.output);
        const bytes = await download(output, signal);
        return await toResult(bytes, job.outputFormat);
      } catch (error) {
        if (signal.aborted && !(error instanceof PortraitProviderError)) {
          if (prediction && (prediction.status === 'starting' || prediction.status === 'processing')) {
            await cancel(prediction.id);
          }
          throw new PortraitProviderError(
            'timeout',
            `Replicate did not finish within ${options.timeoutMs} ms (${Date.now() - started} ms)`,
            { cause: error },
          );
        }
        throw error;
      }
    },
  };
}

function parsePrediction(body: unknown, status: number): Prediction {
  const value = body as Partial<Prediction> | undefined;
  if (!value || typeof value !== 'object' || typeof value.id !== 'string' || !STATUSES.has(String(value.status))) {
    throw new PortraitProviderError('malformed', 'Replicate answered something that is not a prediction', { status });
  }
  return value as Prediction;
}

function errorDetail(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const { detail, title, error } = body as { detail?: unknown; title?: unknown; error?: unknown };
  for (const candidate of [detail, error, title]) if (typeof candidate === 'string' && candidate) return candidate;
  return undefined;
}

function firstOutput(output: unknown): string {
  const first = Array.isArray(output) ? (output[0] as unknown) : output;
  if (typeof first !== 'string' || first === '') {
    throw new PortraitProviderError('malformed', 'The prediction succeeded without an output URL');
  }
  return first;
}

const SHARP_MIME: Record<string, ImageMimeType> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };

/** Reads what arrived and re-encodes it when the model delivered another format. */
async function toResult(bytes: Buffer, format: PortraitOutputFormat): Promise<PortraitResult> {
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes, { failOn: 'truncated' }).metadata();
  } catch (error) {
    throw new PortraitProviderError('malformed', 'The portrait is not a readable image', { cause: error });
  }
  const delivered = metadata.format ? SHARP_MIME[metadata.format] : undefined;
  if (!delivered || !metadata.width || !metadata.height) {
    throw new PortraitProviderError('malformed', `The portrait is not a JPEG, PNG or WebP image`);
  }
  const mimeType = MIME_TYPES[format];
  if (delivered === mimeType) {
    return { bytes, mimeType, width: metadata.width, height: metadata.height, engine: 'replicate' };
  }
  try {
    const image = sharp(bytes, { failOn: 'truncated' });
    const converted =
      format === 'png'
        ? await image.png().toBuffer()
        : format === 'jpeg'
          ? await image.jpeg({ quality: 92 }).toBuffer()
          : await image.webp({ quality: 90 }).toBuffer();
    return { bytes: converted, mimeType, width: metadata.width, height: metadata.height, engine: 'replicate' };
  } catch (error) {
    throw new PortraitProviderError('malformed', 'The portrait could not be decoded', { cause: error });
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
