import { createParser, type EventSourceMessage } from 'eventsource-parser';
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
 * One event of the user's event stream, read back by createEventStreamReader: `id` (to
 * resume from with Last-Event-ID), `event` (its type) and one `data` line of JSON.
 */
export function encodeSseEvent(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\n${encodeSseData(data)}`;
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

/** What our chat stream says (SPEC 7): a `data:` line's JSON, or its end (`data: [DONE]`). */
export type ChatStreamItem = { type: 'data'; value: unknown } | { type: 'done' };

/** Reads a body as it arrives: each read gives what it completed, the end what was left. */
export interface StreamReader<T> {
  /** Feeds the next piece of the body; returns what it completed. */
  push(chunk: string | Uint8Array): T[];
  /** The body ended. */
  end(): T[];
}

/**
 * Feeds a body to eventsource-parser, which splits it into frames as the server-sent events
 * format says (any line break, CRLF cut across reads included; comments skipped; one space
 * after a field's colon). Reads may also cut a UTF-8 character, so bytes go through a
 * streaming TextDecoder.
 */
function frameReader<T>(onFrame: (message: EventSourceMessage, out: T[]) => void) {
  let out: T[] = [];
  const parser = createParser({ onEvent: (message) => onFrame(message, out) });
  let decoder: TextDecoder | undefined;
  // The parser holds a CR at the end of what it was fed, in case an LF follows to make a CRLF.
  let endsInCr = false;
  const feed = (text: string) => {
    if (text === '') return;
    parser.feed(text);
    endsInCr = text.endsWith('\r');
  };
  const taken = () => {
    const done = out;
    out = [];
    return done;
  };
  return {
    push: (chunk: string | Uint8Array): T[] => {
      feed(typeof chunk === 'string' ? chunk : (decoder ??= new TextDecoder()).decode(chunk, { stream: true }));
      return taken();
    },
    /**
     * The body ended. A CR at its very end was a line break, no LF will follow. With
     * `closeFrame` the end also closes the frame under way, as its empty line would.
     */
    end: (closeFrame: boolean): T[] => {
      if (decoder) feed(decoder.decode());
      if (closeFrame) feed('\n\n');
      else if (endsInCr) feed('\n');
      parser.reset();
      return taken();
    },
  };
}

/**
 * SPEC 7: each `data:` line of a frame carries JSON, or `[DONE]`, which ends the stream; a
 * line that cannot be parsed is ignored. The parser joins a frame's data lines with line
 * breaks, which JSON never holds (it escapes them), so each line is read again on its own.
 */
function chatStreamItemsOf(data: string): ChatStreamItem[] {
  return data.split('\n').flatMap((line): ChatStreamItem[] => {
    if (line.trim() === '[DONE]') return [{ type: 'done' }];
    try {
      return [{ type: 'data', value: JSON.parse(line) as unknown }];
    } catch {
      return [];
    }
  });
}

/**
 * Reads our chat stream (SPEC 7) as it arrives: the JSON of its `data:` lines and its end.
 * Event names and ids are not ours to read there.
 */
export function createChatStreamReader(): StreamReader<ChatStreamItem> {
  const reader = frameReader<ChatStreamItem>((message, out) => out.push(...chatStreamItemsOf(message.data)));
  return {
    push: reader.push,
    // A body that ends before the empty line after its last frame (even before that line's
    // own break) still delivers that frame, `data: [DONE]` included: the end closes it.
    end: () => reader.end(true),
  };
}

/**
 * One frame of a stream read by its frames (the user's events): its name (`event:`,
 * "message" when the frame names none), its data lines joined by line breaks, and the
 * stream's last event id after it (`id:`, kept from earlier frames when it names none, as a
 * browser's EventSource keeps it).
 */
export interface SseFrame {
  event: string;
  data: string;
  lastEventId: string | null;
}

/**
 * Reads the user's event stream frame by frame. A frame is dispatched at its empty line; one
 * the body ended before is dropped, as the format says; a frame without data dispatches
 * nothing; an `id` holding NUL is ignored.
 */
export function createEventStreamReader(): StreamReader<SseFrame> {
  let lastEventId: string | null = null;
  const reader = frameReader<SseFrame>((message, out) => {
    // The parser gives a frame only its own id; the stream's last one is ours to keep.
    if (message.id !== undefined) lastEventId = message.id;
    out.push({ event: message.event ?? 'message', data: message.data, lastEventId });
  });
  return { push: reader.push, end: () => reader.end(false) };
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
