/**
 * The chat engine boundary: the route talks to this interface only, so the offline
 * assistant and any OpenAI-compatible service are interchangeable.
 */

export interface ChatMessageIn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * The request field that carries the reply limit. OpenAI's o-series and newer models refuse
 * `max_tokens` (400 unsupported_parameter) and take `max_completion_tokens`; Ollama ignores
 * the latter, so `max_tokens` stays for everything else (PROVIDERS.md).
 */
export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens';

export interface ChatRequest {
  model: string;
  messages: ChatMessageIn[];
  /** Upper bound of reply tokens; the reservation before streaming relies on it. */
  maxTokens: number;
  /** How the limit is sent; undefined: chosen by the model id (see the engine). */
  maxTokensParam?: MaxTokensParam;
  /** Aborting stops generation and closes the upstream request. */
  signal: AbortSignal;
}

/**
 * Why the service ended a reply early (its `finish_reason`): cut at the length limit, or
 * stopped by its content filter. A normal end ("stop") is not reported.
 */
export type ChatFinishReason = 'length' | 'content_filter';

export type ChatChunk =
  | { type: 'delta'; content: string }
  /** The model declined: its explanation, streamed in place of content (`delta.refusal`). */
  | { type: 'refusal'; content: string }
  | { type: 'usage'; promptTokens: number; completionTokens: number; finishReason?: ChatFinishReason };

/**
 * Contract of `stream`:
 * - yields `delta` (or `refusal`) chunks as text arrives, then exactly one `usage` chunk,
 *   last, with the reason the reply ended early when the service gave one;
 * - when the service reports no usage, the numbers are counted locally with gpt-tokenizer;
 * - when `signal` aborts, it stops promptly, still yields the `usage` chunk for what was
 *   produced so far and ends without throwing (check `signal.aborted` to tell it apart);
 * - every other failure is thrown as a `ChatProviderError`, possibly after some deltas.
 */
export interface ChatEngine {
  readonly name: string;
  stream(req: ChatRequest): AsyncIterable<ChatChunk>;
}

/**
 * `unavailable`: the service will not answer anyone until the operator acts (OpenAI's
 * 429 insufficient_quota); the user is told only that chat is unavailable right now.
 */
export type ChatProviderErrorKind =
  'auth' | 'rate_limit' | 'upstream' | 'timeout' | 'bad_request' | 'network' | 'stream' | 'unavailable';

/** Failures that only the operator can fix: logged at error level. */
export function needsOperator(kind: ChatProviderErrorKind): boolean {
  return kind === 'unavailable' || kind === 'auth';
}

export interface ChatProviderErrorOptions {
  status?: number;
  /** The service's own error text, for logs; only some kinds repeat it in `userMessage`. */
  providerMessage?: string;
  /** How long the service asked us to wait (429/503 with retry-after). */
  retryAfterMs?: number;
  cause?: unknown;
}

export class ChatProviderError extends Error {
  readonly kind: ChatProviderErrorKind;
  /** Clear English text that is safe to show to the user: no keys, no internals. */
  readonly userMessage: string;
  readonly status?: number;
  readonly providerMessage?: string;
  readonly retryAfterMs?: number;

  constructor(kind: ChatProviderErrorKind, userMessage: string, options: ChatProviderErrorOptions = {}) {
    const detail = [options.status !== undefined ? `status ${options.status}` : undefined, options.providerMessage]
      .filter((part) => part !== undefined)
      .join(': ');
    super(`chat provider ${kind} error${detail ? ` (${detail})` : ''}`, { cause: options.cause });
    this.name = 'ChatProviderError';
    this.kind = kind;
    this.userMessage = userMessage;
    this.status = options.status;
    this.providerMessage = options.providerMessage;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export function isChatProviderError(error: unknown): error is ChatProviderError {
  return error instanceof ChatProviderError;
}
