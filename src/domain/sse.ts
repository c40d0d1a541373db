import { z } from 'zod';
import { REPLY_ENDINGS } from './chat';

/**
 * The frame format of our own chat stream endpoint (SPEC 7 "Stream format"), written by
 * the server and read by the browser. Every event is one `data:` line holding JSON; the
 * stream ends with `data: [DONE]`.
 */

export const SSE_DONE = 'data: [DONE]\n\n';

export function encodeSseData(value: unknown): string {
  const json = JSON.stringify(value);
  // JSON.stringify returns undefined for undefined/functions, which would put the
  // literal "undefined" on the wire.
  if (json === undefined) throw new TypeError('encodeSseData: value is not serialisable to JSON');
  // JSON escapes newlines inside strings, so the frame is always a single line.
  return `data: ${json}\n\n`;
}

/**
 * A comment frame (heartbeats). Each line gets its own colon so a newline in `text`
 * cannot turn the rest into a data line.
 */
export function sseComment(text = ''): string {
  return `${text
    .split(/\r\n|\r|\n/)
    .map((line) => `: ${line}`)
    .join('\n')}\n\n`;
}

export type SseLineEvent = { type: 'data'; value: unknown } | { type: 'done' };

export interface SseLineParser {
  /** Feeds the next piece of the body; returns the events completed by it. */
  push(chunk: string | Uint8Array): SseLineEvent[];
  /** The body ended: handles a last line that had no line break. */
  end(): SseLineEvent[];
}

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * Incremental, line-based reader. Reads may cut a frame, a line or even a UTF-8
 * character anywhere, so text is buffered until a line break and bytes go through a
 * streaming TextDecoder. Comments, other fields (`event:`, `id:`) and data that is not
 * JSON are skipped: SPEC 7 says lines that cannot be parsed are ignored.
 */
export function createSseLineParser(): SseLineParser {
  let buffer = '';
  let decoder: TextDecoder | undefined;

  function parseLine(line: string): SseLineEvent | undefined {
    if (!line.startsWith('data:')) return undefined;
    // The SSE format allows exactly one optional space after the colon.
    const payload = line.startsWith('data: ') ? line.slice(6) : line.slice(5);
    if (payload.trim() === '[DONE]') return { type: 'done' };
    try {
      return { type: 'data', value: JSON.parse(payload) as unknown };
    } catch {
      return undefined;
    }
  }

  function drain(final: boolean): SseLineEvent[] {
    const events: SseLineEvent[] = [];
    let match: RegExpExecArray | null;
    while ((match = LINE_BREAK.exec(buffer)) !== null) {
      // A lone CR at the very end may be the first half of a CRLF split across reads;
      // waiting for the next read keeps both halves one line break.
      if (!final && match[0] === '\r' && match.index === buffer.length - 1) break;
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      const event = parseLine(line);
      if (event) events.push(event);
    }
    if (final && buffer !== '') {
      const event = parseLine(buffer);
      buffer = '';
      if (event) events.push(event);
    }
    return events;
  }

  return {
    push(chunk) {
      if (typeof chunk === 'string') {
        buffer += chunk;
      } else {
        decoder ??= new TextDecoder();
        buffer += decoder.decode(chunk, { stream: true });
      }
      return drain(false);
    },
    end() {
      if (decoder) buffer += decoder.decode();
      return drain(true);
    },
  };
}

export const chatContextInfoSchema = z.object({
  messagesIncluded: z.number().int().nonnegative(),
  tokensIncluded: z.number().int().nonnegative(),
  contextTokensLimit: z.number().int().nonnegative(),
});
export type ChatContextInfo = z.infer<typeof chatContextInfoSchema>;

export const chatBillingSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cost: z.number().int().nonnegative(),
});
export type ChatBilling = z.infer<typeof chatBillingSchema>;

/**
 * One event of our chat stream. Content events carry `content`; the last one carries
 * `isComplete`, `tokensUsed`, `billing`, `balanceAfter` and, when the reply did not end
 * normally, `ending`; a failure carries `error`
 * (a code) and `message` (text for the user).
 */
export const chatStreamEventSchema = z.object({
  content: z.string().optional(),
  isComplete: z.boolean().optional(),
  tokensUsed: z.number().int().nonnegative().optional(),
  contextInfo: chatContextInfoSchema.optional(),
  billing: chatBillingSchema.optional(),
  balanceAfter: z.number().int().nonnegative().optional(),
  error: z.string().optional(),
  message: z.string().optional(),
  conversationId: z.number().int().optional(),
  messageId: z.number().int().optional(),
  /** On the last event of a reply that is a refusal, was cut at the length limit, or was filtered. */
  ending: z.enum(REPLY_ENDINGS).optional(),
});
export type ChatStreamEvent = z.infer<typeof chatStreamEventSchema>;

/** Reads a parsed `data:` value as our event; anything else is dropped like an unparsable line. */
export function toChatStreamEvent(value: unknown): ChatStreamEvent | undefined {
  const result = chatStreamEventSchema.safeParse(value);
  return result.success ? result.data : undefined;
}
