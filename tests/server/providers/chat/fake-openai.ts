// One file: one fake service: each reply shape of the OpenAI API it replays, with its source beside
// it.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible chat server speaking PROVIDERS.md "OpenAI-compatible chat":
 * `POST /v1/chat/completions` answering with `data: <chunk>` frames, optional `:` comment
 * lines and `data: [DONE]`. Every request is recorded, including whether the client hung
 * up before the reply was finished. Shared by adapter and route tests.
 */

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface FakeErrorBeforeStream {
  status: number;
  message?: string;
  type?: string;
  param?: string | null;
  code?: string | null;
  /** Sent as `retry-after` (seconds, or an HTTP date). */
  retryAfter?: string;
  /** Sent as `retry-after-ms`. */
  retryAfterMs?: string;
  /** Replaces the JSON error body, e.g. to send plain text. */
  rawBody?: string;
}

/**
 * OpenAI's 429 when the account has no credit left. The body as the openai SDK reports it
 * (`RateLimitError: Error code: 429 - {...}`, quoted in DataTalksClub's llm-zoomcamp FAQ,
 * "OpenAI: Error: RateLimitError: Error code: 429"), explained in OpenAI's error-codes
 * guide (platform.openai.com/docs/guides/error-codes, "429 - You exceeded your current
 * quota"). No retry-after: waiting does not mend it.
 */
export const INSUFFICIENT_QUOTA: FakeErrorBeforeStream = {
  status: 429,
  message:
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
  type: 'insufficient_quota',
  param: null,
  code: 'insufficient_quota',
};

/**
 * OpenAI's 400 to `max_tokens` sent to an o-series or GPT-5 model, verbatim as the API
 * answers it (quoted with type, param and code in the issue, #25 item 8; the same text is
 * reported by many users of the reasoning models).
 */
export const UNSUPPORTED_MAX_TOKENS: FakeErrorBeforeStream = {
  status: 400,
  message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
  type: 'invalid_request_error',
  param: 'max_tokens',
  code: 'unsupported_parameter',
};

export interface FakeErrorMidStream {
  /** How many content chunks go out before the error event. */
  afterChunks: number;
  message: string;
  code?: string | number;
}

export interface FakeBehaviour {
  /** Text of the reply. */
  reply: string;
  /** Explicit content pieces; overrides `reply` and `chunkSize`. */
  chunks?: string[];
  /** Characters per content chunk when `chunks` is not given. */
  chunkSize: number;
  /**
   * 'requested': usage chunk only when the body asks with stream_options.include_usage
   * (OpenAI); 'always': sent anyway (some servers); 'never': not sent (others).
   */
  usage: 'requested' | 'always' | 'never';
  /** Numbers of the usage chunk; default prompt 11, completion = number of content chunks. */
  usageTokens?: FakeUsage;
  /** Send `: ...` comment lines (keep-alives) between frames. */
  comments: boolean;
  /** Separate lines with CRLF instead of LF. */
  crlf: boolean;
  /** finish_reason of the last choice chunk. */
  finishReason: 'stop' | 'length' | 'content_filter';
  errorBeforeStream?: FakeErrorBeforeStream;
  errorMidStream?: FakeErrorMidStream;
  /** Wait before sending the response headers. */
  headersDelayMs: number;
  /** Wait after the headers before the first content chunk. */
  firstChunkDelayMs: number;
  /** Wait between chunks. */
  chunkDelayMs: number;
  /** Destroy the socket after this many content chunks (an interrupted stream). */
  dropAfterChunks?: number;
  /** Leave out the final `data: [DONE]`. */
  omitDone: boolean;
  /**
   * The model declines: these pieces stream as `delta.refusal` with `content: null`, in the
   * shape of openai-node's recorded refusal stream (tests/lib/__snapshots__/
   * ChatCompletionStream.test.ts.snap, ".stream() emits refusal logprobs events"); `reply`
   * and `chunks` are not sent.
   */
  refusal?: string[];
  /** Answer a body carrying `max_tokens` with {@link UNSUPPORTED_MAX_TOKENS}, as OpenAI's o-series do. */
  rejectsMaxTokens?: boolean;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401. */
  apiKey?: string;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** The client closed the connection before the reply was complete (not `dropAfterChunks`). */
  aborted: boolean;
  /** The reply was written completely. */
  completed: boolean;
  /** Resolves when the exchange is over, either way. */
  settled: Promise<void>;
}

export type BehaviourInput =
  | Partial<FakeBehaviour>
  /** Decides per request; `index` counts requests since this behaviour was set. */
  | ((ctx: { index: number; body: unknown }) => Partial<FakeBehaviour>);

export interface FakeOpenAi {
  /** Ends in `/v1`, as the SDK's baseURL expects. */
  baseURL: string;
  setBehaviour(behaviour: BehaviourInput): void;
  requests: RecordedRequest[];
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export const defaultBehaviour: FakeBehaviour = {
  reply: 'Hello from the fake model.',
  chunkSize: 4,
  usage: 'requested',
  comments: false,
  crlf: false,
  finishReason: 'stop',
  headersDelayMs: 0,
  firstChunkDelayMs: 0,
  chunkDelayMs: 0,
  omitDone: false,
};

function splitReply(b: FakeBehaviour): string[] {
  if (b.chunks) return b.chunks;
  const chars = Array.from(b.reply);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += b.chunkSize) out.push(chars.slice(i, i + b.chunkSize).join(''));
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function wantsUsage(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const options = (body as { stream_options?: { include_usage?: unknown } }).stream_options;
  return options?.include_usage === true;
}

function modelOf(body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const model = (body as { model?: unknown }).model;
    if (typeof model === 'string') return model;
  }
  return 'fake-model';
}

function sendError(res: ServerResponse, e: FakeErrorBeforeStream): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (e.retryAfter !== undefined) headers['retry-after'] = e.retryAfter;
  if (e.retryAfterMs !== undefined) headers['retry-after-ms'] = e.retryAfterMs;
  const body =
    e.rawBody ??
    JSON.stringify({
      error: {
        message: e.message ?? 'fake error',
        type: e.type ?? 'server_error',
        param: e.param ?? null,
        code: e.code ?? null,
      },
    });
  if (e.rawBody !== undefined) headers['content-type'] = 'text/plain';
  res.writeHead(e.status, headers);
  res.end(body);
}

export async function startFakeOpenAi(initial: BehaviourInput = {}): Promise<FakeOpenAi> {
  let behaviourInput: BehaviourInput = initial;
  let indexSinceSet = 0;
  const requests: RecordedRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];

  const server = createServer((req, res) => {
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    let body: unknown = text;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      // recorded as text
    }
    let settle!: () => void;
    const record: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body,
      aborted: false,
      completed: false,
      settled: new Promise<void>((resolve) => (settle = resolve)),
    };
    requests.push(record);
    for (const w of waiters.splice(0)) {
      if (requests.length >= w.count) w.resolve();
      else waiters.push(w);
    }

    let closed = false;
    let droppedByUs = false;
    res.on('close', () => {
      closed = true;
      if (!res.writableFinished && !droppedByUs) record.aborted = true;
      settle();
    });

    // Delays end early when the client goes away, so tests see the close promptly.
    const pause = (ms: number): Promise<void> =>
      ms <= 0
        ? Promise.resolve()
        : new Promise((resolve) => {
            const done = (): void => {
              clearTimeout(timer);
              res.off('close', done);
              resolve();
            };
            const timer = setTimeout(done, ms);
            res.on('close', done);
          });

    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      sendError(res, { status: 404, message: `Unknown path ${req.method} ${req.url}`, type: 'invalid_request_error' });
      record.completed = true;
      return;
    }

    const index = indexSinceSet++;
    const b: FakeBehaviour = {
      ...defaultBehaviour,
      ...(typeof behaviourInput === 'function' ? behaviourInput({ index, body }) : behaviourInput),
    };

    await pause(b.headersDelayMs);
    if (closed) return;

    if (b.apiKey !== undefined && req.headers.authorization !== `Bearer ${b.apiKey}`) {
      sendError(res, {
        status: 401,
        message: 'Incorrect API key provided: sk-te****key.',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
      record.completed = true;
      return;
    }
    if (b.rejectsMaxTokens && typeof body === 'object' && body !== null && 'max_tokens' in body) {
      sendError(res, UNSUPPORTED_MAX_TOKENS);
      record.completed = true;
      return;
    }
    if (b.errorBeforeStream) {
      sendError(res, b.errorBeforeStream);
      record.completed = true;
      return;
    }

    const eol = b.crlf ? '\r\n' : '\n';
    const id = `chatcmpl-fake-${requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    const model = modelOf(body);
    const frame = (obj: unknown): string => `data: ${JSON.stringify(obj)}${eol}${eol}`;
    const chunk = (delta: Record<string, unknown>, finishReason: string | null): string =>
      frame({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finishReason }],
      });
    const write = (s: string): void => {
      if (!closed) res.write(s);
    };

    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    if (b.comments) write(`: OPENROUTER PROCESSING${eol}${eol}`);
    // The first chunk of openai-node's recorded refusal stream: content null, refusal "".
    write(
      chunk(b.refusal ? { role: 'assistant', content: null, refusal: '' } : { role: 'assistant', content: '' }, null),
    );

    const pieces = b.refusal ?? splitReply(b);
    for (let i = 0; i < pieces.length; i++) {
      if (b.errorMidStream && i === b.errorMidStream.afterChunks) break;
      if (b.dropAfterChunks !== undefined && i === b.dropAfterChunks) break;
      await pause(i === 0 ? b.firstChunkDelayMs : b.chunkDelayMs);
      if (closed) return;
      if (b.comments) write(`: keep-alive${eol}`);
      write(chunk(b.refusal ? { refusal: pieces[i] } : { content: pieces[i] }, null));
    }

    if (b.dropAfterChunks !== undefined && b.dropAfterChunks < pieces.length) {
      // Let the chunks already written reach the client before the connection dies.
      await new Promise<void>((resolve) => res.write('', () => resolve()));
      await pause(20);
      droppedByUs = true;
      res.socket?.destroy();
      return;
    }
    if (b.errorMidStream) {
      // OpenRouter's shape: a chunk with a top-level `error` and finish_reason "error".
      write(
        frame({
          id,
          object: 'chat.completion.chunk',
          created,
          model,
          error: { code: b.errorMidStream.code ?? 502, message: b.errorMidStream.message },
          choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
        }),
      );
      res.end();
      record.completed = true;
      return;
    }

    write(chunk({}, b.finishReason));
    const sendUsage = b.usage === 'always' || (b.usage === 'requested' && wantsUsage(body));
    if (sendUsage) {
      const usage = b.usageTokens ?? { prompt_tokens: 11, completion_tokens: pieces.length };
      write(
        frame({
          id,
          object: 'chat.completion.chunk',
          created,
          model,
          choices: [],
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        }),
      );
    }
    if (!b.omitDone) write(`data: [DONE]${eol}${eol}`);
    if (closed) return;
    res.end();
    record.completed = true;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    setBehaviour(behaviour) {
      behaviourInput = behaviour;
      indexSinceSet = 0;
    },
    waitForRequests(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`fake-openai: ${requests.length} of ${count} requests after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * A seeded random mode: each request fails with probability `rate`, with one of the failures
 * below drawn by `random`; the others get `base`. Use it with `setBehaviour`. The failures:
 * - a 429 rate limit with `retry-after-ms` (OpenAI's rate-limit error, platform.openai.com/docs/
 *   guides/error-codes "429 - Rate limit reached for requests"; the header is the one openai-node
 *   reads first, src/client.ts `retryRequest`);
 * - {@link INSUFFICIENT_QUOTA};
 * - a 500 (`server_error`, error-codes "500 - The server had an error while processing your request");
 * - the stream cut after two content chunks (the socket destroyed);
 * - the stream stalled after the headers for `stallMs` (set it past the client's timeout).
 * `counts` tallies the failures sent, by name.
 */
export function chaosBehaviour(options: {
  rate: number;
  random: () => number;
  stallMs: number;
  base?: Partial<FakeBehaviour>;
}): { behaviour: BehaviourInput; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const failures: Array<[string, Partial<FakeBehaviour>]> = [
    [
      'rate limit',
      {
        errorBeforeStream: {
          status: 429,
          message: 'Rate limit reached for requests',
          type: 'requests',
          retryAfterMs: '1',
        },
      },
    ],
    ['insufficient quota', { errorBeforeStream: INSUFFICIENT_QUOTA }],
    [
      'server error',
      {
        errorBeforeStream: {
          status: 500,
          message: 'The server had an error while processing your request. Sorry about that!',
          type: 'server_error',
          retryAfterMs: '1',
        },
      },
    ],
    ['stream cut', { dropAfterChunks: 2 }],
    ['stall', { firstChunkDelayMs: options.stallMs }],
  ];
  const behaviour: BehaviourInput = () => {
    if (options.random() >= options.rate) return options.base ?? {};
    const [name, failure] = failures[Math.floor(options.random() * failures.length)] as [
      string,
      Partial<FakeBehaviour>,
    ];
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return { ...options.base, ...failure };
  };
  return { behaviour, counts };
}
