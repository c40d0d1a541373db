// One file: one fake service: each reply shape of Stability's API it replays, with its source
// beside it.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { ASPECT_RATIOS, SDXL_SIZES, type AspectRatio } from '../../../../src/domain/images';
import { ASPECT_RATIO_PIXEL_SIZES } from '../../../../server/providers/images/sizes';

/**
 * A fake Stability AI on 127.0.0.1 speaking PROVIDERS.md: the v1 SDXL text-to-image JSON
 * API and the v2beta stable-image multipart API, in both accept modes, with the
 * documented error bodies. Tests steer it with setBehaviour/queueBehaviours and read
 * back what the adapter sent from `requests`.
 */

export type FakeImageFormat = 'png' | 'jpeg' | 'webp';

export type FakeStabilityBehaviour =
  /** A generated image. size/format/seed override what the request implies. */
  | {
      kind: 'success';
      finishReason?: 'SUCCESS' | 'CONTENT_FILTERED' | 'ERROR';
      seed?: number;
      size?: { width: number; height: number };
      format?: FakeImageFormat;
    }
  /** Shorthand for a success whose finish reason is CONTENT_FILTERED. */
  | { kind: 'content-filtered'; seed?: number }
  /**
   * An error status with the API's documented body: v1 `{id, name, message}`, v2beta
   * `{id, name, errors: [message]}`. name/message default per status.
   */
  | { kind: 'error'; status: number; name?: string; message?: string; body?: string; contentType?: string }
  /** Waits before answering (with `then`, or a success). */
  | { kind: 'slow'; delayMs: number; then?: FakeStabilityBehaviour }
  /** A 200 whose body cannot be used. */
  | {
      kind: 'malformed';
      variant: 'invalid-json' | 'no-image' | 'undecodable-image' | 'truncated-image' | 'wrong-content-type';
    }
  /** Closes the socket without answering. */
  | { kind: 'drop-connection' };

export interface FakeStabilityOptions {
  /** When set, any other bearer token gets the documented 401. */
  apiKey?: string;
  /** Older references refused webp on /sd3, newer ones accept it (PROVIDERS.md). */
  sd3Webp?: 'refuse' | 'accept';
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed body of a JSON request. */
  json?: unknown;
  /** The fields of a multipart request; files appear as "[file name size]". */
  fields?: Record<string, string>;
  /** Which API the path belongs to. */
  api: 'v1' | 'v2beta' | 'unknown';
  /** For v2beta, the model from the path. */
  model?: 'ultra' | 'core' | 'sd3';
}

export interface FakeStability {
  /** Base URL, e.g. http://127.0.0.1:41234, to pass as the adapter's baseUrl. */
  url: string;
  /** Every request received, oldest first. */
  requests: RecordedRequest[];
  /** The behaviour for every following request (after any queued ones). */
  setBehaviour(behaviour: FakeStabilityBehaviour): void;
  /** One-shot behaviours used in order before the standing one. */
  queueBehaviours(...behaviours: FakeStabilityBehaviour[]): void;
  setSd3Webp(mode: 'refuse' | 'accept'): void;
  /**
   * When set, picks each request's behaviour (after any queued ones, instead of the
   * standing one): for many generations at once with failures at random.
   */
  pick?: () => FakeStabilityBehaviour;
  /** Back to success, the options given at start, no queued behaviours and no recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

export const V1_PATH = '/v1/generation/stable-diffusion-xl-1024-v1-0/text-to-image';
export const V2_PATH_PREFIX = '/v2beta/stable-image/generate/';
export const FAKE_DEFAULT_SEED = 1234567;

/**
 * v1 error bodies `{id, name, message}`, as Stability's v1 reference publishes them: the
 * OpenAPI document behind platform.stability.ai/docs/api-reference (v1), published as
 * github.com/Stability-AI/rest-api-support generated/spec/merged.json, components.responses
 * 400FromGeneration, 401, 403, 404 and 500, whose `message` texts these are (the `id` there
 * is a UUID). 402 and 429 are not in the v1 reference: they carry v2beta's names and wording
 * (PROVIDERS.md marks that unconfirmed), so tests must not lean on the text.
 */
const V1_ERROR_DEFAULTS: Record<number, { name: string; message: string }> = {
  // merged.json 400FromGeneration example.
  400: { name: 'bad_request', message: 'init_image: is required' },
  // merged.json responses.401 example.
  401: { name: 'unauthorized', message: 'missing authorization header' },
  // (unconfirmed for v1) v2beta's payment_required.
  402: { name: 'payment_required', message: 'You lack sufficient credits to make this request' },
  // merged.json responses.403 example.
  403: { name: 'permission_denied', message: 'You do not have permission to access this resource' },
  // merged.json responses.404 example.
  404: { name: 'not_found', message: 'The specified engine (ID some-fake-engine) was not found.' },
  // (unconfirmed for v1) v2beta's rate_limit_exceeded.
  429: {
    name: 'rate_limit_exceeded',
    message:
      'You have exceeded the rate limit of 150 requests within a 10 second period, and have been timed out for 60 seconds.',
  },
  // merged.json responses.500 example.
  500: { name: 'server_error', message: 'An unexpected server error occurred, please try again.' },
};

/**
 * v2beta error bodies `{id, name, errors: [...]}` (`id` 32 hex digits), as Stability's API
 * reference publishes them for POST /v2beta/stable-image/generate/{ultra,core,sd3}
 * (platform.stability.ai/docs/api-reference, "Generate"): one example per status, quoted
 * in PROVIDERS.md's summary. 403 is content moderation, not a permission problem.
 */
const V2_ERROR_DEFAULTS: Record<number, { name: string; message: string }> = {
  // Reference 400: "Invalid parameter(s), see the errors field for details", errors ["some-field: is required"].
  400: { name: 'bad_request', message: 'some-field: is required' },
  // Reference 401 (authorization header missing or invalid).
  401: { name: 'unauthorized', message: 'authorization: invalid or missing header value' },
  // Reference 402: the account is out of credits.
  402: { name: 'payment_required', message: 'You lack sufficient credits to make this request' },
  // Reference 403 ContentModerationResponse example.
  403: {
    name: 'content_moderation',
    message:
      'Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.',
  },
  404: { name: 'not_found', message: 'The requested resource was not found' },
  // Reference 413: "Your request was larger than 10MiB."
  413: { name: 'payload_too_large', message: 'body: payloads cannot be larger than 10MiB in size' },
  // Reference 422: "Your request was well-formed, but rejected", example invalid_language.
  422: { name: 'invalid_language', message: 'English is the only supported language for this service.' },
  // Reference 429: 150 requests within 10 s, then a 60 s timeout.
  429: {
    name: 'rate_limit_exceeded',
    message:
      'You have exceeded the rate limit of 150 requests within a 10 second period, and have been timed out for 60 seconds.',
  },
  // Reference 500.
  500: { name: 'internal_error', message: 'An unexpected server error has occurred, please try again later.' },
};

interface ParsedRequest {
  record: RecordedRequest;
  api: 'v1' | 'v2beta' | 'unknown';
  model?: 'ultra' | 'core' | 'sd3';
  accept: string;
  json?: unknown;
  fields?: Record<string, string>;
  contentType: string;
}

export async function startFakeStability(options: FakeStabilityOptions = {}): Promise<FakeStability> {
  let standing: FakeStabilityBehaviour = { kind: 'success' };
  let queue: FakeStabilityBehaviour[] = [];
  let sd3Webp = options.sd3Webp ?? 'accept';
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const imageCache = new Map<string, Buffer>();

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: newId(), name: 'fake_failure', message: String(error) }));
      } else {
        res.destroy();
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const parsed = await parseRequest(req, body);
    requests.push(parsed.record);
    const behaviour = queue.shift() ?? fake.pick?.() ?? standing;
    await respond(parsed, behaviour, res);
  }

  async function respond(
    request: ParsedRequest,
    behaviour: FakeStabilityBehaviour,
    res: ServerResponse,
  ): Promise<void> {
    if (request.api === 'unknown') {
      sendError(res, 'v1', 404, {});
      return;
    }
    const auth = request.record.headers.authorization;
    if (!auth || !auth.startsWith('Bearer ') || (options.apiKey !== undefined && auth !== `Bearer ${options.apiKey}`)) {
      sendError(res, request.api, 401, {});
      return;
    }
    const invalid = request.api === 'v1' ? validateV1(request) : validateV2(request, sd3Webp);
    if (invalid) {
      sendError(res, request.api, 400, invalid);
      return;
    }

    switch (behaviour.kind) {
      case 'drop-connection':
        res.socket?.destroy();
        return;
      case 'slow': {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, behaviour.delayMs);
          timers.add(timer);
          res.on('close', () => {
            clearTimeout(timer);
            timers.delete(timer);
            resolve();
          });
        });
        if (res.destroyed || res.writableEnded) return;
        await respond(request, behaviour.then ?? { kind: 'success' }, res);
        return;
      }
      case 'error':
        if (behaviour.body !== undefined) {
          res.writeHead(behaviour.status, { 'content-type': behaviour.contentType ?? 'text/html' });
          res.end(behaviour.body);
          return;
        }
        sendError(res, request.api, behaviour.status, { name: behaviour.name, message: behaviour.message });
        return;
      case 'malformed':
        await sendMalformed(request, behaviour.variant, res);
        return;
      case 'content-filtered':
        await sendSuccess(request, { kind: 'success', finishReason: 'CONTENT_FILTERED', seed: behaviour.seed }, res);
        return;
      case 'success':
        await sendSuccess(request, behaviour, res);
        return;
    }
  }

  async function sendSuccess(
    request: ParsedRequest,
    behaviour: Extract<FakeStabilityBehaviour, { kind: 'success' }>,
    res: ServerResponse,
  ): Promise<void> {
    const format: FakeImageFormat =
      behaviour.format ??
      (request.api === 'v1' ? 'png' : ((request.fields?.output_format as FakeImageFormat | undefined) ?? 'png'));
    const size = behaviour.size ?? requestedSize(request);
    const requestedSeed = request.api === 'v1' ? numberField(request.json, 'seed') : Number(request.fields?.seed ?? 0);
    // Stability picks a seed when none (or 0) is sent and reports it back.
    const seed = behaviour.seed ?? (requestedSeed && requestedSeed > 0 ? requestedSeed : FAKE_DEFAULT_SEED);
    const finishReason = behaviour.finishReason ?? 'SUCCESS';
    const bytes = await image(size.width, size.height, format, seed);

    if (wantsBytes(request)) {
      // Bytes: v1 per merged.json (text-to-image 200 "image/png" with the Finish-Reason and
      // Seed headers); v2beta per the API reference's Generate 200 for `accept: image/*`
      // (content-type image/{output_format}, finish-reason and seed headers).
      const headers =
        request.api === 'v1'
          ? { 'Content-Type': 'image/png', 'Finish-Reason': finishReason, Seed: String(seed) }
          : { 'content-type': `image/${format}`, 'finish-reason': finishReason, seed: String(seed) };
      res.writeHead(200, headers);
      res.end(bytes);
      return;
    }
    // JSON: v1 per merged.json (200 application/json, `artifacts` of Image {base64, seed,
    // finishReason}); v2beta per the reference's Generate 200 for `accept: application/json`
    // ({image, finish_reason, seed}).
    const payload =
      request.api === 'v1'
        ? { artifacts: [{ base64: bytes.toString('base64'), seed, finishReason }] }
        : { image: bytes.toString('base64'), finish_reason: finishReason, seed };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  }

  async function sendMalformed(
    request: ParsedRequest,
    variant: Extract<FakeStabilityBehaviour, { kind: 'malformed' }>['variant'],
    res: ServerResponse,
  ): Promise<void> {
    const json = (value: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(typeof value === 'string' ? value : JSON.stringify(value));
    };
    const garbage = Buffer.from('this is not an image at all');
    switch (variant) {
      case 'invalid-json':
        json('{"artifacts": [{"base64": "iVBORw0');
        return;
      case 'no-image':
        json(request.api === 'v1' ? { artifacts: [] } : { finish_reason: 'SUCCESS', seed: FAKE_DEFAULT_SEED });
        return;
      case 'wrong-content-type':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>Welcome to nginx!</body></html>');
        return;
      case 'undecodable-image':
      case 'truncated-image': {
        const bytes =
          variant === 'undecodable-image'
            ? garbage
            : (await image(1024, 1024, 'png', FAKE_DEFAULT_SEED, true)).subarray(0, 2000);
        if (wantsBytes(request)) {
          res.writeHead(200, {
            'content-type': 'image/png',
            'finish-reason': 'SUCCESS',
            seed: String(FAKE_DEFAULT_SEED),
          });
          res.end(bytes);
          return;
        }
        json(
          request.api === 'v1'
            ? { artifacts: [{ base64: bytes.toString('base64'), seed: FAKE_DEFAULT_SEED, finishReason: 'SUCCESS' }] }
            : { image: bytes.toString('base64'), finish_reason: 'SUCCESS', seed: FAKE_DEFAULT_SEED },
        );
        return;
      }
    }
  }

  /** Solid images are cheap to encode; `noisy` gives a PNG big enough to cut short. */
  async function image(
    width: number,
    height: number,
    format: FakeImageFormat,
    seed: number,
    noisy = false,
  ): Promise<Buffer> {
    const key = `${width}x${height}.${format}.${seed % 256}.${noisy}`;
    const cached = imageCache.get(key);
    if (cached) return cached;
    const base = noisy
      ? sharp({
          create: {
            width,
            height,
            channels: 3,
            background: '#808080',
            noise: { type: 'gaussian', mean: 128, sigma: 40 },
          },
        })
      : sharp({ create: { width, height, channels: 3, background: { r: seed % 256, g: 120, b: 200 } } });
    const bytes = await base.toFormat(format).toBuffer();
    imageCache.set(key, bytes);
    return bytes;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeStability = {
    url: `http://127.0.0.1:${port}`,
    requests,
    setBehaviour(behaviour) {
      standing = behaviour;
    },
    queueBehaviours(...behaviours) {
      queue.push(...behaviours);
    },
    setSd3Webp(mode) {
      sd3Webp = mode;
    },
    reset() {
      standing = { kind: 'success' };
      queue = [];
      sd3Webp = options.sd3Webp ?? 'accept';
      fake.pick = undefined;
      requests.length = 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
  return fake;
}

function newId(): string {
  return randomBytes(16).toString('hex');
}

function sendError(
  res: ServerResponse,
  api: 'v1' | 'v2beta' | 'unknown',
  status: number,
  override: { name?: string; message?: string },
): void {
  const defaults = (api === 'v2beta' ? V2_ERROR_DEFAULTS : V1_ERROR_DEFAULTS)[status] ?? {
    name: 'error',
    message: `Error ${status}`,
  };
  const name = override.name ?? defaults.name;
  const message = override.message ?? defaults.message;
  const body = api === 'v2beta' ? { id: newId(), name, errors: [message] } : { id: randomUUID(), name, message };
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function parseRequest(req: IncomingMessage, body: Buffer): Promise<ParsedRequest> {
  const url = new URL(req.url ?? '/', 'http://fake.invalid');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  const contentType = headers['content-type'] ?? '';
  const method = req.method ?? 'GET';
  let api: ParsedRequest['api'] = 'unknown';
  let model: ParsedRequest['model'];
  if (method === 'POST' && url.pathname === V1_PATH) api = 'v1';
  if (method === 'POST' && url.pathname.startsWith(V2_PATH_PREFIX)) {
    const name = url.pathname.slice(V2_PATH_PREFIX.length);
    if (name === 'ultra' || name === 'core' || name === 'sd3') {
      api = 'v2beta';
      model = name;
    }
  }

  let json: unknown;
  let fields: Record<string, string> | undefined;
  if (contentType.includes('application/json')) {
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = undefined;
    }
  } else if (contentType.startsWith('multipart/form-data')) {
    // undici's Request parses multipart bodies, so the fake needs no parser of its own.
    const form = await new Request(url, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: new Uint8Array(body),
    }).formData();
    fields = {};
    for (const [name, value] of form.entries()) {
      fields[name] = typeof value === 'string' ? value : `[file ${value.name} ${value.size}]`;
    }
  }

  return {
    record: {
      method,
      path: url.pathname,
      headers,
      ...(json !== undefined ? { json } : {}),
      ...(fields ? { fields } : {}),
      api,
      ...(model ? { model } : {}),
    },
    api,
    model,
    accept: headers.accept ?? '',
    json,
    fields,
    contentType,
  };
}

function wantsBytes(request: ParsedRequest): boolean {
  // v1 defaults to JSON, v2beta to bytes, as in the references.
  if (request.api === 'v1') return request.accept.includes('image/png');
  return !request.accept.includes('application/json');
}

function numberField(value: unknown, key: string): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'number' ? field : undefined;
}

function requestedSize(request: ParsedRequest): { width: number; height: number } {
  if (request.api === 'v1') {
    return { width: numberField(request.json, 'width') ?? 1024, height: numberField(request.json, 'height') ?? 1024 };
  }
  const ratio = (request.fields?.aspect_ratio ?? '1:1') as AspectRatio;
  return ASPECT_RATIO_PIXEL_SIZES[request.model ?? 'core'][ratio];
}

function validateV1(request: ParsedRequest): { name: string; message: string } | undefined {
  if (!request.contentType.includes('application/json')) {
    return { name: 'bad_request', message: 'content-type: must be application/json' };
  }
  const body = request.json;
  if (typeof body !== 'object' || body === null) return { name: 'bad_request', message: 'body: must be a JSON object' };
  const prompts = (body as Record<string, unknown>).text_prompts;
  if (!Array.isArray(prompts) || prompts.length === 0) {
    return { name: 'bad_request', message: 'text_prompts: cannot be empty' };
  }
  const width = numberField(body, 'width') ?? 1024;
  const height = numberField(body, 'height') ?? 1024;
  if (!SDXL_SIZES.some((s) => s.width === width && s.height === height)) {
    return {
      name: 'invalid_height_or_width',
      message: `for stable-diffusion-xl-1024-v1-0 the allowed dimensions are ${SDXL_SIZES.map((s) => `${s.width}x${s.height}`).join(', ')}, but we received ${width}x${height}`,
    };
  }
  return undefined;
}

function validateV2(
  request: ParsedRequest,
  sd3Webp: 'refuse' | 'accept',
): { name: string; message: string } | undefined {
  const fields = request.fields;
  if (!fields) return { name: 'bad_request', message: 'content-type: must be multipart/form-data' };
  if (!fields.prompt?.trim()) return { name: 'bad_request', message: 'prompt: cannot be empty' };
  if (fields.aspect_ratio !== undefined && !(ASPECT_RATIOS as readonly string[]).includes(fields.aspect_ratio)) {
    return { name: 'bad_request', message: `aspect_ratio: must be one of ${ASPECT_RATIOS.join(', ')}` };
  }
  const format = fields.output_format ?? 'png';
  if (!['png', 'jpeg', 'webp'].includes(format)) {
    return { name: 'bad_request', message: 'output_format: must be one of png, jpeg, webp' };
  }
  if (request.model === 'sd3' && format === 'webp' && sd3Webp === 'refuse') {
    return { name: 'bad_request', message: 'output_format: must be one of png, jpeg' };
  }
  if (fields.seed !== undefined && !/^\d+$/.test(fields.seed)) {
    return { name: 'bad_request', message: 'seed: must be an integer between 0 and 4294967294' };
  }
  return undefined;
}
