import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { countMessageTokens, countTokens } from './tokens';
import { createUndiciFetch } from './transport';
import { ChatProviderError } from './types';
import type { ChatChunk, ChatEngine, ChatProviderErrorKind, ChatRequest } from './types';

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
  /** OpenAI wants max_completion_tokens; Ollama ignores it, so max_tokens is the default. */
  useMaxCompletionTokens?: boolean;
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
} as const;

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

/**
 * A retry-after beyond our patience is marked "do not retry" (`x-should-retry`, which
 * the SDK obeys), since the SDK would otherwise sleep for as long as the service asks.
 */
function boundedRetryFetch(baseFetch: typeof fetch, maxRetryDelayMs: number): typeof fetch {
  return async (input, init) => {
    const response = await baseFetch(input, init);
    if (response.ok) return response;
    const wait = retryAfterMsOf(response.headers);
    if (wait === undefined || wait <= maxRetryDelayMs) return response;
    const headers = new Headers(response.headers);
    headers.set('x-should-retry', 'false');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
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
    const timeoutError = (): ChatProviderError => new ChatProviderError('timeout', texts.timeout);

    const body: ChatCompletionCreateParamsStreaming = {
      model: req.model,
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      stream_options: { include_usage: true },
      ...(options.useMaxCompletionTokens ? { max_completion_tokens: req.maxTokens } : { max_tokens: req.maxTokens }),
    };

    let produced = '';
    let reported: { promptTokens: number; completionTokens: number } | undefined;
    try {
      let chunks: AsyncIterable<ChatCompletionChunk> | undefined;
      try {
        chunks = await untilAborted(client.chat.completions.create(body, { signal: upstream.signal }), upstream.signal);
      } catch (err) {
        if (!(req.signal.aborted && err instanceof APIUserAbortError)) throw mapRequestError(err);
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
            const content = chunk.choices?.find((c) => c.index === 0)?.delta?.content;
            if (typeof content === 'string' && content !== '') {
              produced += content;
              // The timer is off while the consumer holds us at `yield`: a slow reader is
              // not a slow service.
              yield { type: 'delta', content };
            }
            if (req.signal.aborted) break;
            startIdleTimer();
          }
        } catch (err) {
          if (timedOut) throw timeoutError();
          if (!req.signal.aborted) throw mapStreamError(err);
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
    };
  }

  return { name: 'openai', stream };
}
