import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { countProviderError, type ProviderErrorKind } from '../../metrics';
import { countMessageTokens, countTokens } from './tokens';
import { createUndiciFetch } from './transport';
import { ChatProviderError } from './types';
import type {
  ChatChunk,
  ChatEngine,
  ChatFinishReason,
  ChatProviderErrorKind,
  ChatRequest,
  MaxTokensParam,
} from './types';

/**
 * Chat through any OpenAI-compatible service (OpenAI, Ollama, vLLM, OpenRouter), wire
 * shapes as in PROVIDERS.md "OpenAI-compatible chat".
 */

export interface OpenAiChatEngineOptions {
  apiKey: string;
  baseURL: string;
  /**
   * Limits each wait: for the response headers of every attempt (the SDK's timeout, which
   * it retries) and then for every next chunk of the stream, the first one included.
   */
  timeoutMs: number;
  /** Attempts after the first; the SDK only retries before the stream starts. */
  maxRetries: number;
  /**
   * A retry-after longer than this is not waited for: the error goes straight to the
   * user instead of leaving the chat hanging. Default 5000.
   */
  maxRetryDelayMs?: number;
  /** For tests and proxies; defaults to {@link createUndiciFetch}. */
  fetch?: typeof fetch;
}

const texts = {
  auth: 'The language model service rejected our credentials.',
  forbidden: 'The language model service refused access.',
  rateLimit: 'The language model service is busy. Please try again later.',
  upstream: 'The language model service failed to answer. Please try again later.',
  badRequest: 'The language model service rejected the request.',
  timeout: 'The language model service did not answer in time. Please try again later.',
  network: 'Could not reach the language model service. Please try again later.',
  connectionLost: 'The connection to the language model service was lost. Please try again.',
  streamError: 'The language model service failed while answering.',
  malformed: 'The language model service sent a reply we could not read.',
  // The operator's problem (the account is out of credit): no provider text, no billing words.
  unavailable: 'Chat is unavailable right now. Please try again later.',
} as const;

/**
 * OpenAI's reasoning models (o1, o3, o4-mini, ...) and GPT-5 onwards refuse `max_tokens`
 * (400 unsupported_parameter) and take `max_completion_tokens`. Every other id keeps
 * `max_tokens`, the one field Ollama, vLLM and llama.cpp all read. A model's own
 * `maxTokensParam` in OPENAI_MODELS overrides this guess.
 */
const COMPLETION_TOKENS_MODEL = /^(?:o\d+|gpt-(?:[5-9]|\d{2,}))(?:[-.:]|$)/i;

export function maxTokensParamFor(modelId: string): MaxTokensParam {
  return COMPLETION_TOKENS_MODEL.test(modelId) ? 'max_completion_tokens' : 'max_tokens';
}

/**
 * OpenAI's answer when the account has no credit left: 429 with
 * `{"error":{"type":"insufficient_quota","code":"insufficient_quota",...}}` (older bodies
 * carry only the type). Waiting does not help, unlike a rate limit.
 */
function isQuotaError(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const { code, type } = body as { code?: unknown; type?: unknown };
  return code === 'insufficient_quota' || type === 'insufficient_quota';
}

const PROVIDER_MESSAGE_MAX_CHARS = 300;

function withDetails(base: string, providerMessage: string | undefined): string {
  return providerMessage ? `${base} Details: ${providerMessage}` : base;
}

function cleanProviderMessage(text: string): string | undefined {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return undefined;
  return flat.length > PROVIDER_MESSAGE_MAX_CHARS ? `${flat.slice(0, PROVIDER_MESSAGE_MAX_CHARS)}…` : flat;
}

/** What we read of the SDK's APIError (generic over `any` there). */
interface ApiErrorLike {
  error?: unknown;
  headers?: Headers;
  status?: number;
  message: string;
}

/** The service's own text: `error.message` of the JSON body, or a plain-text body. */
function providerMessageOf(err: ApiErrorLike): string | undefined {
  const body: unknown = err.error;
  if (typeof body === 'object' && body !== null && 'message' in body) {
    const m = body.message;
    if (typeof m === 'string') return cleanProviderMessage(m);
  }
  if (body !== undefined) return undefined;
  // Without a JSON body the SDK builds "<status> <text>" or "<status> status code (no body)".
  const text = err.status !== undefined ? err.message.replace(new RegExp(`^${err.status} `), '') : err.message;
  if (/^status code \(no body\)$/.test(text)) return undefined;
  return cleanProviderMessage(text);
}

function retryAfterMsOf(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && Number.isFinite(Number.parseFloat(ms))) return Number.parseFloat(ms);
  const after = headers.get('retry-after');
  if (after === null) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

function statusError(err: ApiErrorLike, status: number): ChatProviderError {
  const providerMessage = providerMessageOf(err);
  const retryAfterMs = retryAfterMsOf(err.headers);
  const make = (kind: ChatProviderErrorKind, userMessage: string): ChatProviderError =>
    new ChatProviderError(kind, userMessage, { status, providerMessage, retryAfterMs, cause: err });
  // A 401 text often echoes part of the key, so it stays in the log, not on screen.
  if (status === 401) return make('auth', texts.auth);
  if (status === 403) return make('auth', withDetails(texts.forbidden, providerMessage));
  if (status === 408) return make('timeout', texts.timeout);
  if (status === 429 && isQuotaError(err.error)) return make('unavailable', texts.unavailable);
  if (status === 429) return make('rate_limit', withDetails(texts.rateLimit, providerMessage));
  if (status >= 400 && status < 500) return make('bad_request', withDetails(texts.badRequest, providerMessage));
  return make('upstream', withDetails(texts.upstream, providerMessage));
}

/** Failures before the response started: statuses, timeouts, refused connections. */
function mapRequestError(err: unknown): ChatProviderError {
  if (err instanceof ChatProviderError) return err;
  if (err instanceof APIConnectionTimeoutError) {
    return new ChatProviderError('timeout', texts.timeout, { cause: err });
  }
  if (err instanceof APIConnectionError) {
    return new ChatProviderError('network', texts.network, { cause: err });
  }
  if (err instanceof APIError && typeof err.status === 'number') return statusError(err, err.status);
  return new ChatProviderError('network', texts.network, { cause: err });
}

/** The metric's name for a failure after the stream began. */
function streamFailureKind(error: ChatProviderError): ProviderErrorKind {
  if (error.kind === 'network') return 'network';
  if (error.kind === 'timeout') return 'timeout';
  if (error.kind === 'stream' && error.cause instanceof SyntaxError) return 'invalid_response';
  return 'server_error';
}

/** Failures while reading the stream. */
function mapStreamError(err: unknown): ChatProviderError {
  if (err instanceof ChatProviderError) return err;
  // The SDK turns a data event carrying `error` (OpenRouter) into a status-less APIError.
  if (err instanceof APIError && err.status === undefined && !(err instanceof APIConnectionError)) {
    const providerMessage = providerMessageOf(err);
    return new ChatProviderError('stream', withDetails(texts.streamError, providerMessage), {
      providerMessage,
      cause: err,
    });
  }
  if (err instanceof APIError && typeof err.status === 'number') return statusError(err, err.status);
  if (err instanceof SyntaxError) return new ChatProviderError('stream', texts.malformed, { cause: err });
  return new ChatProviderError('network', texts.connectionLost, { cause: err });
}

/** The metric's name for a failed answer (imagegen_provider_errors_total). */
function failedStatusKind(status: number, quota: boolean): ProviderErrorKind {
  if (quota) return 'quota';
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  return status >= 500 ? 'server_error' : 'refused';
}

function countFailure(kind: ProviderErrorKind): void {
  countProviderError('openai', kind);
}

/**
 * Every attempt the SDK makes passes here, so each failed one is counted. Two kinds of
 * failure are marked "do not retry" (`x-should-retry`, which the SDK obeys): a 429
 * insufficient_quota, which no wait mends, and a retry-after beyond our patience, for which
 * the SDK would otherwise sleep as long as the service asks.
 */
function boundedRetryFetch(baseFetch: typeof fetch, maxRetryDelayMs: number): typeof fetch {
  return async (input, init) => {
    let response: Response;
    try {
      response = await baseFetch(input, init);
    } catch (error) {
      // An abort is ours (the caller, or the SDK's timeout, counted where it is known).
      if (!init?.signal?.aborted) countFailure('network');
      throw error;
    }
    if (response.ok) return response;
    let quota = false;
    let body: BodyInit | null = response.body;
    if (response.status === 429) {
      // Error bodies are small: read to tell an empty account from a busy one.
      const text = await response.text();
      body = text;
      try {
        quota = isQuotaError((JSON.parse(text) as { error?: unknown }).error);
      } catch {
        // not JSON: a plain rate limit
      }
    }
    countFailure(failedStatusKind(response.status, quota));
    const wait = retryAfterMsOf(response.headers);
    const giveUp = quota || (wait !== undefined && wait > maxRetryDelayMs);
    if (!giveUp && body === response.body) return response;
    const headers = new Headers(response.headers);
    if (giveUp) headers.set('x-should-retry', 'false');
    return new Response(body, { status: response.status, statusText: response.statusText, headers });
  };
}

/**
 * Settles with the promise, or with `undefined` as soon as `signal` aborts. The SDK's
 * backoff sleep between retries does not listen to the signal; a user who gives up
 * should not wait for it.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

export function createOpenAiChatEngine(options: OpenAiChatEngineOptions): ChatEngine {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
    fetch: boundedRetryFetch(options.fetch ?? createUndiciFetch(), options.maxRetryDelayMs ?? 5000),
  });
  const { timeoutMs } = options;

  async function* stream(req: ChatRequest): AsyncGenerator<ChatChunk> {
    const promptTokensEstimate = (): number => countMessageTokens(req.messages);
    if (req.signal.aborted) {
      yield { type: 'usage', promptTokens: promptTokensEstimate(), completionTokens: 0 };
      return;
    }

    // Our own controller: aborted by the caller's signal, by the idle timer, or when the
    // consumer stops iterating early. The SDK ties the HTTP request to it.
    const upstream = new AbortController();
    const onCallerAbort = (): void => upstream.abort();
    req.signal.addEventListener('abort', onCallerAbort, { once: true });
    let timedOut = false;
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const stopIdleTimer = (): void => clearTimeout(idleTimer);
    const startIdleTimer = (): void => {
      stopIdleTimer();
      idleTimer = setTimeout(() => {
        timedOut = true;
        upstream.abort();
      }, timeoutMs);
    };
    const timeoutError = (): ChatProviderError => {
      countFailure('timeout');
      return new ChatProviderError('timeout', texts.timeout);
    };
    const param = req.maxTokensParam ?? maxTokensParamFor(req.model);

    const body: ChatCompletionCreateParamsStreaming = {
      model: req.model,
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      stream_options: { include_usage: true },
      ...(param === 'max_completion_tokens' ? { max_completion_tokens: req.maxTokens } : { max_tokens: req.maxTokens }),
    };

    let produced = '';
    let reported: { promptTokens: number; completionTokens: number } | undefined;
    let finishReason: ChatFinishReason | undefined;
    try {
      let chunks: AsyncIterable<ChatCompletionChunk> | undefined;
      try {
        chunks = await untilAborted(client.chat.completions.create(body, { signal: upstream.signal }), upstream.signal);
      } catch (err) {
        if (!(req.signal.aborted && err instanceof APIUserAbortError)) {
          const mapped = mapRequestError(err);
          // Statuses and refused connections were counted per attempt on the way in.
          if (mapped.kind === 'timeout' && mapped.status === undefined) countFailure('timeout');
          throw mapped;
        }
      }

      if (chunks && !req.signal.aborted) {
        try {
          startIdleTimer();
          for await (const chunk of chunks) {
            stopIdleTimer();
            if (chunk.usage) {
              // Some servers repeat a running usage in every chunk; the last one wins.
              reported = {
                promptTokens: chunk.usage.prompt_tokens,
                completionTokens: chunk.usage.completion_tokens,
              };
            }
            const choice = chunk.choices?.find((c) => c.index === 0);
            if (choice?.finish_reason === 'length' || choice?.finish_reason === 'content_filter') {
              finishReason = choice.finish_reason;
            }
            const content = choice?.delta?.content;
            if (typeof content === 'string' && content !== '') {
              produced += content;
              // The timer is off while the consumer holds us at `yield`: a slow reader is
              // not a slow service.
              yield { type: 'delta', content };
            }
            // A refusal streams in `delta.refusal` with `content: null` (openai-node's
            // recorded refusal stream): it is the reply the user gets.
            const refusal = choice?.delta?.refusal;
            if (typeof refusal === 'string' && refusal !== '') {
              produced += refusal;
              yield { type: 'refusal', content: refusal };
            }
            if (req.signal.aborted) break;
            startIdleTimer();
          }
        } catch (err) {
          if (timedOut) throw timeoutError();
          if (!req.signal.aborted) {
            const mapped = mapStreamError(err);
            countFailure(streamFailureKind(mapped));
            throw mapped;
          }
        }
        // The SDK ends the iteration quietly when its request is aborted.
        if (timedOut) throw timeoutError();
      }
    } finally {
      stopIdleTimer();
      req.signal.removeEventListener('abort', onCallerAbort);
      // Closes the HTTP request if we leave early (error, abort, consumer stopped reading).
      upstream.abort();
    }

    yield {
      type: 'usage',
      promptTokens: reported?.promptTokens ?? promptTokensEstimate(),
      completionTokens: reported?.completionTokens ?? countTokens(produced),
      ...(finishReason ? { finishReason } : {}),
    };
  }

  return { name: 'openai', stream };
}
