import { z } from 'zod';
import { chatErrorMessages } from './chat-messages';
import type { Problem } from './errors';
import { storedText } from './text';

/**
 * Chat rules shared by the browser and the server (SPEC sections 2 "Chat", 5, 8, 9).
 * Every limit lives here once; UI hints, request validation and billing read it from here.
 */

/** Longest message a user may send, counted after trimming. */
export const CHAT_MESSAGE_MAX_CHARS = 32000;

/** SPEC 7: the stream call sends maxTokens 2000. */
export const CHAT_MAX_TOKENS_DEFAULT = 2000;
export const CHAT_MAX_TOKENS_MIN = 1;
/** GPT-4o's output ceiling (PROVIDERS.md); larger requests would only be refused upstream. */
export const CHAT_MAX_TOKENS_MAX = 16384;

export const CONTEXT_TOKENS_LIMIT_DEFAULT = 500;
export const CONTEXT_TOKENS_LIMIT_MIN = 100;
export const CONTEXT_TOKENS_LIMIT_MAX = 10000;
export const CONTEXT_TOKENS_LIMIT_STEP = 100;

/** Context window assumed for a model whose descriptor does not say. */
export const DEFAULT_MODEL_CONTEXT_TOKENS = 128000;

/** SPEC 9: 1000 tokens is roughly 750 words. */
export const TOKENS_PER_WORDS_SAMPLE = 1000;
export const WORDS_PER_1000_TOKENS = 750;

/** Height the input box may grow to, in pixels. */
export const CHAT_INPUT_MAX_HEIGHT_PX = 120;

/** SPEC 8: the chat's error texts, word for word (chat-messages.ts). */
export { chatErrorMessages };

export type ChatErrorKey = keyof typeof chatErrorMessages;

/** A chat failure of SPEC section 8 as a problem: its key is its code. */
export function chatProblem(key: ChatErrorKey): Problem {
  return { code: key, message: chatErrorMessages[key] };
}

/** The least any reply costs (chatCost never charges 0): a smaller balance pays for nothing. */
export const CHAT_MIN_REPLY_COST = 1;

/** SPEC 6: spending is gated by the balance; below the cheapest reply nothing can be sent. */
export function cannotPayAnyReply(balance: number): boolean {
  return !(balance >= CHAT_MIN_REPLY_COST);
}

/**
 * Kinds of failure the chat stream reports in its `error` field (the provider's, and our
 * INTERNAL), as codes the browser words.
 */
export const CHAT_STREAM_FAILURE_KINDS = [
  'auth',
  'rate_limit',
  'upstream',
  'timeout',
  'bad_request',
  'network',
  'stream',
  // The service will not answer until the operator acts (its account is out of credit).
  'unavailable',
] as const;

/**
 * Why a stored reply is not an ordinary complete answer (issue #25, items 6 and 7): the
 * model declined (its refusal is the reply), the reply was cut at the length limit, or the
 * provider's content filter stopped it. Shown under the reply in the user's language.
 */
export const REPLY_ENDINGS = ['refusal', 'length', 'content_filter'] as const;
export type ReplyEnding = (typeof REPLY_ENDINGS)[number];

/** The code of a stream failure: CHAT_UPSTREAM for "upstream"; a catalogue code as it is. */
export function streamFailureCode(kind: string): string {
  return (CHAT_STREAM_FAILURE_KINDS as readonly string[]).includes(kind) ? `CHAT_${kind.toUpperCase()}` : kind;
}

/**
 * Normalises what the settings input produced. Input elements hand over strings, and an
 * empty or half-typed value must not wipe the setting, hence `previous` for anything
 * that is not a finite number.
 */
export function clampContextLimit(value: unknown, previous: number): number {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && value.trim() !== '') n = Number(value.trim());
  else return previous;
  if (!Number.isFinite(n)) return previous;
  const stepped = Math.round(n / CONTEXT_TOKENS_LIMIT_STEP) * CONTEXT_TOKENS_LIMIT_STEP;
  return Math.min(CONTEXT_TOKENS_LIMIT_MAX, Math.max(CONTEXT_TOKENS_LIMIT_MIN, stepped));
}

export interface ChatCostInput {
  inputTokens: number;
  outputTokens: number;
  /** App tokens charged per 1M model input tokens. */
  inputCostPer1M: number;
  /** App tokens charged per 1M model output tokens. */
  outputCostPer1M: number;
}

/**
 * App tokens to charge for one reply. Never 0, so every reply is visible in the ledger.
 * The epsilon stops float noise (e.g. 3.0000000000000004) from costing a whole extra token.
 */
export function chatCost({ inputTokens, outputTokens, inputCostPer1M, outputCostPer1M }: ChatCostInput): number {
  for (const [name, v] of Object.entries({ inputTokens, outputTokens, inputCostPer1M, outputCostPer1M })) {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`chatCost: ${name} must be a non-negative number, got ${v}`);
  }
  const raw = (inputTokens * inputCostPer1M) / 1e6 + (outputTokens * outputCostPer1M) / 1e6;
  return Math.max(1, Math.ceil(raw - 1e-9));
}

/** What is reserved before streaming: the whole prompt plus a reply as long as allowed. */
export function worstCaseCost(
  promptTokens: number,
  maxTokens: number,
  model: { inputCostPer1M: number; outputCostPer1M: number },
): number {
  return chatCost({
    inputTokens: promptTokens,
    outputTokens: maxTokens,
    inputCostPer1M: model.inputCostPer1M,
    outputCostPer1M: model.outputCostPer1M,
  });
}

const CONTEXT_LIMIT_RULE = `Context token limit must be a multiple of ${CONTEXT_TOKENS_LIMIT_STEP} from ${CONTEXT_TOKENS_LIMIT_MIN} to ${CONTEXT_TOKENS_LIMIT_MAX}`;

/** Body of `POST /llm/conversations/{id}/stream` (and the non-streaming chat calls). */
export const chatStreamRequestSchema = z.object({
  message: storedText({
    max: CHAT_MESSAGE_MAX_CHARS,
    multiline: true,
    trim: true,
    missing: 'Message is required',
    notText: 'Message must be text',
    required: 'Message cannot be empty',
    tooLong: `Message must be at most ${CHAT_MESSAGE_MAX_CHARS} characters`,
  }),
  model: z.string({ error: chatErrorMessages.noModelSelected }).trim().min(1, chatErrorMessages.noModelSelected),
  maxTokens: z
    .number({ error: 'maxTokens must be a number' })
    .int('maxTokens must be a whole number')
    .min(CHAT_MAX_TOKENS_MIN, `maxTokens must be between ${CHAT_MAX_TOKENS_MIN} and ${CHAT_MAX_TOKENS_MAX}`)
    .max(CHAT_MAX_TOKENS_MAX, `maxTokens must be between ${CHAT_MAX_TOKENS_MIN} and ${CHAT_MAX_TOKENS_MAX}`)
    .default(CHAT_MAX_TOKENS_DEFAULT),
  contextTokensLimit: z
    .number({ error: 'Context token limit must be a number' })
    // One rule, one message: 50 is both out of range and off-step and gets one line, not two.
    .int({ error: CONTEXT_LIMIT_RULE, abort: true })
    .min(CONTEXT_TOKENS_LIMIT_MIN, { error: CONTEXT_LIMIT_RULE, abort: true })
    .max(CONTEXT_TOKENS_LIMIT_MAX, { error: CONTEXT_LIMIT_RULE, abort: true })
    .multipleOf(CONTEXT_TOKENS_LIMIT_STEP, { error: CONTEXT_LIMIT_RULE })
    .default(CONTEXT_TOKENS_LIMIT_DEFAULT),
});
/** What the server works with after validation (defaults filled in, message trimmed). */
export type ChatStreamRequest = z.output<typeof chatStreamRequestSchema>;
/** What a client may send. */
export type ChatStreamRequestInput = z.input<typeof chatStreamRequestSchema>;

/**
 * One entry of the model list. Costs are app tokens per 1M model tokens; null means the
 * price is not known, which only changes how the option is labelled.
 */
export const chatModelSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  description: z.string().default(''),
  maxTokens: z.number().int().positive().default(DEFAULT_MODEL_CONTEXT_TOKENS),
  inputCostPer1M: z.number().nonnegative().nullable().default(null),
  outputCostPer1M: z.number().nonnegative().nullable().default(null),
  isStreamingAllowed: z.boolean().default(true),
});
export type ChatModel = z.output<typeof chatModelSchema>;
export type ChatModelInput = z.input<typeof chatModelSchema>;

/** The price part of a model option, structured so the UI can translate it. */
export type ModelCostInfo =
  { kind: 'per1M'; input: number; output: number } | { kind: 'per1K'; estimate: number } | { kind: 'unknown' };

type ModelCosts = { inputCostPer1M?: number | null; outputCostPer1M?: number | null };

export function modelCostInfo(model: ModelCosts): ModelCostInfo {
  const input = model.inputCostPer1M ?? null;
  const output = model.outputCostPer1M ?? null;
  if (input !== null && output !== null) return { kind: 'per1M', input, output };
  // With one side unknown the only honest figure left is the known rate scaled to 1000 tokens.
  const known = input ?? output;
  if (known === null) return { kind: 'unknown' };
  return { kind: 'per1K', estimate: (known * TOKENS_PER_WORDS_SAMPLE) / 1e6 };
}

/** Costs are shown without float noise: whole numbers as is, fractions to a few digits. */
export function formatCost(value: number): string {
  if (Number.isInteger(value)) return String(value);
  const digits = Math.abs(value) < 1 ? 4 : 2;
  return String(Number(value.toFixed(digits)));
}

/** SPEC 2 "Chat settings modal": the English option label. */
export function modelOptionLabel(model: { name: string } & ModelCosts): string {
  const info = modelCostInfo(model);
  switch (info.kind) {
    case 'per1M':
      return `${model.name} (${formatCost(info.input)}/${formatCost(info.output)} per 1M tokens)`;
    case 'per1K':
      return `${model.name} (~${formatCost(info.estimate)} per 1K tokens)`;
    case 'unknown':
      return model.name;
  }
}

/**
 * SPEC 2/5: the `/chat/{conversationId}` route value must be a whole number; anything
 * else (including "12abc", which parseInt would accept) sends the user back to /chat.
 */
export function parseConversationId(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return undefined;
  const id = Number(value);
  return Number.isSafeInteger(id) ? id : undefined;
}

export type RelativeDateLabel =
  { kind: 'today' } | { kind: 'yesterday' } | { kind: 'daysAgo'; n: number } | { kind: 'date'; date: Date };

const MS_PER_DAY = 86_400_000;

/** Whole calendar days in the local time zone; UTC arithmetic on local parts ignores DST shifts. */
function localDayNumber(d: Date): number {
  return Math.round(Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) / MS_PER_DAY);
}

/**
 * SPEC 2 "Conversation list": Today, Yesterday, "n days ago" for 2..6 days, otherwise a
 * date. Calendar days count, not 24-hour spans, so 00:01 after a message at 23:59 is
 * already "Yesterday". Dates in the future (another clock) fall back to the date.
 */
export function relativeDateLabel(date: Date | string | number, now: Date = new Date()): RelativeDateLabel {
  const d = date instanceof Date ? date : new Date(date);
  if (Number.isNaN(d.getTime()) || Number.isNaN(now.getTime())) return { kind: 'date', date: d };
  const days = localDayNumber(now) - localDayNumber(d);
  if (days === 0) return { kind: 'today' };
  if (days === 1) return { kind: 'yesterday' };
  if (days >= 2 && days <= 6) return { kind: 'daysAgo', n: days };
  return { kind: 'date', date: d };
}
