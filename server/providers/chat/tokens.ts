import { createRequire } from 'node:module';
import type * as GptTokenizer from 'gpt-tokenizer';
import type { ChatContextInfo } from '../../../src/domain/sse';
import type { ChatMessageIn } from './types';

/**
 * Token counts with the o200k encoding (GPT-4o family). For other model families the
 * numbers are an estimate, which is all history trimming and fallback billing need.
 *
 * The encoding's table of 200,000 tokens takes about 65 MB of the process's memory, so it
 * is loaded on the first count (the first chat reply, once), not at start: an
 * instance that only makes images and portraits never carries it.
 */
type Tokenizer = typeof GptTokenizer;
const load = createRequire(import.meta.url);
let tokenizer: Tokenizer | undefined;

function countEncodedTokens(text: string, options?: Parameters<Tokenizer['countTokens']>[1]): number {
  tokenizer ??= load('gpt-tokenizer') as Tokenizer;
  return tokenizer.countTokens(text, options);
}

// User text is data, not control: "<|endoftext|>" typed by a user must count as plain
// text instead of making the tokenizer throw.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** OpenAI's published accounting: every message costs 3 tokens of framing besides role and content. */
const TOKENS_PER_MESSAGE = 3;
/** Every reply is primed with <|start|>assistant<|message|>. */
const TOKENS_PER_REPLY_PRIMING = 3;

/** Each role's name is one token in o200k (the tests count them with the encoding). */
export const ROLE_TOKENS: Readonly<Record<ChatMessageIn['role'], number>> = { system: 1, user: 1, assistant: 1 };

/** A lower bound of what one message costs (framing and role), whatever its text. */
export const MIN_TOKENS_PER_MESSAGE = TOKENS_PER_MESSAGE + Math.min(...Object.values(ROLE_TOKENS));

export function countTokens(text: string): number {
  return text === '' ? 0 : countEncodedTokens(text, PLAIN_TEXT);
}

/** Tokens one message occupies inside a prompt. */
export function countSingleMessageTokens(message: ChatMessageIn): number {
  return TOKENS_PER_MESSAGE + ROLE_TOKENS[message.role] + countTokens(message.content);
}

/** Prompt tokens of a whole request, reply priming included. */
export function countMessageTokens(messages: readonly ChatMessageIn[]): number {
  if (messages.length === 0) return 0;
  let total = TOKENS_PER_REPLY_PRIMING;
  for (const m of messages) total += countSingleMessageTokens(m);
  return total;
}

/**
 * The most prompt tokens {@link trimHistory} can produce for `newMessage` under
 * `contextTokensLimit`, whatever the history: the limit, or the new message alone when it
 * is bigger, plus the reply priming. Lets a reply be priced before the history is read.
 */
export function promptTokensBound(newMessage: ChatMessageIn, contextTokensLimit: number): number {
  return TOKENS_PER_REPLY_PRIMING + Math.max(contextTokensLimit, countSingleMessageTokens(newMessage));
}

export interface TrimmedHistory {
  /** Chronological, ending with the new message. */
  messages: ChatMessageIn[];
  contextInfo: ChatContextInfo;
}

/**
 * Keeps the newest history that fits `contextTokensLimit` together with the new message.
 * Walking back stops at the first message that does not fit rather than skipping it:
 * a conversation with holes would misrepresent what was said. The new message is always
 * sent, even alone over the limit; refusing it is the message length rule's job.
 */
export function trimHistory(
  history: readonly ChatMessageIn[],
  newMessage: ChatMessageIn,
  contextTokensLimit: number,
): TrimmedHistory {
  let tokensIncluded = countSingleMessageTokens(newMessage);
  const kept: ChatMessageIn[] = [];
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message === undefined) break;
    const tokens = countSingleMessageTokens(message);
    if (tokensIncluded + tokens > contextTokensLimit) break;
    tokensIncluded += tokens;
    kept.push(message);
  }
  kept.reverse();
  kept.push(newMessage);
  return {
    messages: kept,
    contextInfo: { messagesIncluded: kept.length, tokensIncluded, contextTokensLimit },
  };
}
