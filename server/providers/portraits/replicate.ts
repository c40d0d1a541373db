// Longer than 400 lines on purpose: Replicate's whole prediction protocol (create, poll,
// download, cancel) and its failure mapping, steps that share one deadline and one cancel path.
import sharp, { type Metadata } from 'sharp';
import type { PortraitOutputFormat } from '../../../src/domain/portraits';
import { MIME_TYPES, type ImageMimeType } from '../images/types';
import { countProviderError, type ProviderErrorKind } from '../../metrics';
import { PortraitProviderError, type PortraitJob, type PortraitProvider, type PortraitResult } from './types';

/**
 * Portraits through Replicate's predictions API (PROVIDERS.md "Portraits"):
 *
 * 1. `POST /v1/models/{owner}/{name}/predictions` (or `/v1/predictions` with a version
 *    when the model is `owner/name:version`) with a short `Prefer: wait`, a `Cancel-After`
 *    at our own deadline, and the photo as a data URI;
 * 2. while the prediction is starting or processing, poll `GET /v1/predictions/{id}` on
 *    the configured API host (never on an address from the answer);
 * 3. download the output at once (Replicate deletes it after an hour), only from the API
 *    host or a configured delivery host, over the same scheme, with a size limit and no
 *    redirects; convert it to the asked format when the model delivers another;
 * 4. whenever we stop waiting for a prediction that has not ended (an error, our deadline,
 *    the caller's signal: the client gone, the server shutting down), cancel it with
 *    `POST /v1/predictions/{id}/cancel`, so nothing runs on that Replicate bills.
 *
 * Retries follow the official client (replicate-javascript, `request()` in index.js and
 * `withAutomaticRetries` in lib/util.js): a GET is retried on 429 and 5xx, any other
 * method on 429 only; at most 5 retries; the wait is `Retry-After` (seconds or an HTTP
 * date) when the answer has one, else 500 ms * 2^attempt plus up to 100 ms of jitter.
 * Two deliberate differences: the cancel is retried on 5xx and network errors too (a
 * second cancel of the same prediction changes nothing, and a lost cancel is billed), and
 * a create is never repeated after a network error (the first may have started a
 * prediction whose id we would never learn). A wait that would end past our deadline is
 * not started: the call fails with the last answer at once.
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

/** The waits between retries; tests pass a clock whose sleep returns at once. */
export interface RetryClock {
  now(): number;
  /** Resolves after `ms`; rejects when `signal` aborts first. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface ReplicateRetryOptions {
  /** Retries after the first attempt (replicate-javascript: 5). */
  maxRetries?: number;
  /** Backoff base: intervalMs * 2^attempt (replicate-javascript: 500). */
  intervalMs?: number;
  /** Up to this much is added to each backoff (replicate-javascript: 100). */
  jitterMs?: number;
  clock?: RetryClock;
  random?: () => number;
}

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
  retry?: ReplicateRetryOptions;
  /** How long a cancel may take with its retries (it runs after our own deadline). */
  cancelTimeoutMs?: number;
}

/** What a prediction looks like on the wire (only what we read). */
interface Prediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted';
  output?: unknown;
  error?: unknown;
}

/** `aborted`: Replicate's own deadline (Cancel-After) struck before the prediction started. */
const STATUSES = new Set(['starting', 'processing', 'succeeded', 'failed', 'canceled', 'aborted']);
const running = (prediction: Prediction) => prediction.status === 'starting' || prediction.status === 'processing';
const DEFAULT_POLL_MS = 1000;
const DEFAULT_MAX_OUTPUT_BYTES = 30 * 1024 * 1024;
/**
 * How long Replicate may hold the create (`Prefer: wait`, at most 60 s). Short, because
 * until the create answers we do not know the prediction's id: a caller that goes away
 * meanwhile has to wait for the answer to cancel what it started.
 */
const PREFER_WAIT_S = 5;
/** How long a create may take beyond its `Prefer: wait`. */
const CREATE_SLACK_MS = 10_000;
const DEFAULT_CANCEL_TIMEOUT_MS = 10_000;
/** replicate-javascript's defaults (lib/util.js withAutomaticRetries). */
const DEFAULT_RETRY = { maxRetries: 5, intervalMs: 500, jitterMs: 100 };

export const realClock: RetryClock = { now: () => Date.now(), sleep };

/** flux-kontext-pro delivers jpg or png; webp is made here from a lossless png. */
const WIRE_FORMAT: Record<PortraitOutputFormat, string> = { webp: 'png', png: 'png', jpeg: 'jpg' };

type Operation = 'create' | 'poll' | 'cancel';

export function createReplicatePortraitProvider(options: ReplicateOptions): PortraitProvider {
  const base = new URL(options.baseUrl.replace(/\/+$/, '') + '/');
  const names = { ...DEFAULT_REPLICATE_INPUT_NAMES, ...options.inputNames };
  const pollMs = options.pollIntervalMs ?? DEFAULT_POLL_MS;
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const cancelTimeoutMs = options.cancelTimeoutMs ?? DEFAULT_CANCEL_TIMEOUT_MS;
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  const clock = options.retry?.clock ?? realClock;
  const random = options.retry?.random ?? Math.random;
  const deliveryHosts = (options.deliveryHosts ?? DEFAULT_REPLICATE_DELIVERY_HOSTS).map((h) => h.toLowerCase());
  const headers = {
    authorization: `Bearer ${options.apiToken}`,
    'content-type': 'application/json',
  };

  const api = (path: string) => new URL(path.replace(/^\/+/, ''), base);

  /**
   * One API call with the official client's retries. `request` aborts an attempt in
   * flight; `wait` stops the retrying (between attempts); `until` (by the clock) is the
   * moment past which no wait is started.
   */
  async function send(
    operation: Operation,
    url: URL,
    init: RequestInit,
    limits: { request: AbortSignal; wait: AbortSignal; until: number },
  ): Promise<Prediction> {
    for (let attempt = 0; ; attempt += 1) {
      let failure: PortraitProviderError;
      let retryAfterMs: number | undefined;
      limits.wait.throwIfAborted();
      try {
        return await attemptOnce(url, init, limits.request);
      } catch (error) {
        if (!(error instanceof PortraitProviderError)) throw error;
        failure = error;
        retryAfterMs = retryAfterOf(error.retryAfter, clock.now());
      }
      const retryable =
        failure.kind === 'http'
          ? failure.status === 429 || (operation !== 'create' && (failure.status ?? 0) >= 500)
          : failure.kind === 'network' && operation !== 'create';
      if (!retryable || attempt >= retry.maxRetries) throw failure;
      const delay = retryAfterMs ?? retry.intervalMs * 2 ** attempt + Math.floor(random() * retry.jitterMs);
      if (clock.now() + delay > limits.until) throw failure;
      try {
        await clock.sleep(delay, limits.wait);
      } catch (error) {
        if (!limits.wait.aborted) throw error;
        // We stopped waiting: what the provider last said is the reason the call failed.
        throw failure;
      }
    }
  }

  async function attemptOnce(url: URL, init: RequestInit, signal: AbortSignal): Promise<Prediction> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, headers: { ...headers, ...init.headers }, signal, redirect: 'error' });
    } catch (error) {
      if (signal.aborted) throw error;
      countProviderError('replicate', 'network');
      throw new PortraitProviderError('network', `Replicate could not be reached: ${String(error)}`, { cause: error });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (signal.aborted) throw error;
      countProviderError('replicate', 'network');
      throw new PortraitProviderError('network', `Replicate's answer was cut: ${String(error)}`, { cause: error });
    }
    let body: unknown;
    try {
      body = text ? (JSON.parse(text) as unknown) : undefined;
    } catch (error) {
      if (response.ok) countProviderError('replicate', 'invalid_response');
      else countProviderError('replicate', errorKindOf(response.status));
      throw new PortraitProviderError(
        response.ok ? 'malformed' : 'http',
        `Replicate answered ${response.status} with a body that is not JSON`,
        { status: response.status, cause: error, retryAfter: response.headers.get('retry-after') ?? undefined },
      );
    }
    if (!response.ok) {
      countProviderError('replicate', errorKindOf(response.status));
      const detail = errorDetail(body);
      throw new PortraitProviderError('http', `Replicate answered ${response.status}${detail ? `: ${detail}` : ''}`, {
        status: response.status,
        providerMessage: detail,
        retryAfter: response.headers.get('retry-after') ?? undefined,
      });
    }
    try {
      return parsePrediction(body, response.status);
    } catch (error) {
      countProviderError('replicate', 'invalid_response');
      throw error;
    }
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
      countProviderError('replicate', 'network');
      throw new PortraitProviderError('network', 'The portrait could not be downloaded', { cause: error });
    }
    if (!response.ok || !response.body) {
      countProviderError('replicate', response.ok ? 'invalid_response' : errorKindOf(response.status));
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

  /**
   * Cancels a prediction we stopped waiting for, retried within its own time (the
   * caller's has usually run out). A cancel that still fails is counted; Replicate's own
   * deadline (the create's Cancel-After) stops the prediction then.
   */
  async function cancel(id: string): Promise<void> {
    const budget = AbortSignal.timeout(cancelTimeoutMs);
    try {
      await send(
        'cancel',
        api(`v1/predictions/${encodeURIComponent(id)}/cancel`),
        { method: 'POST' },
        {
          request: budget,
          wait: budget,
          until: clock.now() + cancelTimeoutMs,
        },
      );
    } catch (error) {
      if (budget.aborted) countProviderError('replicate', 'timeout');
      // The failure of each attempt is counted; the caller's own error is the one to report.
      void error;
    }
  }

  return {
    name: 'replicate',
    async create(job: PortraitJob): Promise<PortraitResult> {
      const until = clock.now() + options.timeoutMs;
      const deadline = AbortSignal.timeout(options.timeoutMs);
      const signal = job.signal ? AbortSignal.any([job.signal, deadline]) : deadline;
      const { url, version } = predictionsUrl();
      // Held at most half the deadline, so the answer (and the id to cancel) comes in time.
      const waitS = Math.max(1, Math.min(PREFER_WAIT_S, Math.floor(options.timeoutMs / 2000)));
      // The create runs to its answer even when we stop waiting meanwhile: without the id
      // in it, the prediction it started could not be cancelled.
      const creating = send(
        'create',
        url,
        {
          method: 'POST',
          headers: { prefer: `wait=${waitS}`, 'cancel-after': cancelAfter(options.timeoutMs) },
          body: JSON.stringify({ ...(version ? { version } : {}), input: inputOf(job) }),
        },
        { request: AbortSignal.timeout(waitS * 1000 + CREATE_SLACK_MS), wait: signal, until },
      );
      let prediction: Prediction | undefined;
      try {
        prediction = await untilAborted(creating, signal);
        while (running(prediction)) {
          await sleep(pollMs, signal);
          prediction = await send(
            'poll',
            api(`v1/predictions/${encodeURIComponent(prediction.id)}`),
            {},
            {
              request: signal,
              wait: signal,
              until,
            },
          );
        }
        if (prediction.status !== 'succeeded') {
          const reason = typeof prediction.error === 'string' ? prediction.error : undefined;
          countProviderError('replicate', 'refused');
          throw new PortraitProviderError('failed', `The prediction ended ${prediction.status}`, {
            providerMessage: reason,
          });
        }
        const output = firstOutput(prediction.output);
        const bytes = await download(output, signal);
        return await toResult(bytes, job.outputFormat);
      } catch (error) {
        // Whatever ended the wait, a prediction still running is cancelled before we go.
        const last = prediction ?? (await creating.catch(() => undefined));
        if (last && running(last)) await cancel(last.id);
        if (error instanceof PortraitProviderError) throw error;
        if (signal.aborted) {
          const timedOut = deadline.aborted || isTimeout(job.signal?.reason);
          if (timedOut) countProviderError('replicate', 'timeout');
          throw new PortraitProviderError(
            timedOut ? 'timeout' : 'aborted',
            timedOut
              ? `Replicate did not finish within ${options.timeoutMs} ms`
              : 'The portrait was stopped before Replicate finished',
            { cause: error },
          );
        }
        if (isTimeout(error)) {
          // The create's own limit: Replicate held it past Prefer: wait and the slack.
          countProviderError('replicate', 'timeout');
          throw new PortraitProviderError('timeout', 'Replicate did not answer the create in time', { cause: error });
        }
        throw error;
      }
    },
  };
}

/** replicate-javascript reads Retry-After as seconds or as an HTTP date. */
function retryAfterOf(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Replicate's Cancel-After takes a duration such as `90s` or `1m`. */
function cancelAfter(timeoutMs: number): string {
  return `${Math.max(5, Math.ceil(timeoutMs / 1000))}s`;
}

function errorKindOf(status: number): ProviderErrorKind {
  if (status === 429) return 'rate_limited';
  if (status === 402) return 'quota';
  if (status >= 500) return 'server_error';
  return 'refused';
}

function isTimeout(reason: unknown): boolean {
  return reason instanceof Error && reason.name === 'TimeoutError';
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  });
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
