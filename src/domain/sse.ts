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
 * One event of the user's event stream (GET /api/events), read back by
 * createSseFrameParser: `id` (to resume from with Last-Event-ID), `event` (its type) and
 * one `data` line of JSON.
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

export type SseLineEvent = { type: 'data'; value: unknown } | { type: 'done' };

export interface SseLineParser {
  /** Feeds the next piece of the body; returns the events completed by it. */
  push(chunk: string | Uint8Array): SseLineEvent[];
  /** The body ended: handles a last line that had no line break. */
  end(): SseLineEvent[];
}

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * Splits a body into lines as it arrives. Reads may cut a frame, a line or even a UTF-8
 * character anywhere, so text is buffered until a line break and bytes go through a
 * streaming TextDecoder. Both readers below take their lines from here.
 */
function createLineSplitter(): {
  push(chunk: string | Uint8Array): string[];
  /** The lines the end completes, and what followed the last line break. */
  end(): { lines: string[]; rest: string };
} {
  let buffer = '';
  let decoder: TextDecoder | undefined;

  function drain(final: boolean): string[] {
    const lines: string[] = [];
    let match: RegExpExecArray | null;
    while ((match = LINE_BREAK.exec(buffer)) !== null) {
      // A lone CR at the very end may be the first half of a CRLF split across reads;
      // waiting for the next read keeps both halves one line break.
      if (!final && match[0] === '\r' && match.index === buffer.length - 1) break;
      lines.push(buffer.slice(0, match.index));
      buffer = buffer.slice(match.index + match[0].length);
    }
    return lines;
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
      const lines = drain(true);
      const rest = buffer;
      buffer = '';
      return { lines, rest };
    },
  };
}

/**
 * Incremental, line-based reader of the chat stream. Comments, other fields (`event:`,
 * `id:`) and data that is not JSON are skipped: SPEC 7 says lines that cannot be parsed are
 * ignored.
 */
export function createSseLineParser(): SseLineParser {
  const lines = createLineSplitter();

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

  const parse = (batch: string[]) => batch.flatMap((line) => parseLine(line) ?? []);
  return {
    push: (chunk) => parse(lines.push(chunk)),
    // A body that ends without a final line break still delivers its last line.
    end: () => {
      const { lines: last, rest } = lines.end();
      return parse(rest === '' ? last : [...last, rest]);
    },
  };
}

/**
 * One event of a stream read by its frames (the job events of GET /api/events): its name
 * (`event:`, "message" when the frame names none), its data lines joined by line breaks,
 * and the stream's last event id after it (`id:`, kept from earlier frames when it names
 * none, as a browser's EventSource keeps it).
 */
export interface SseFrame {
  event: string;
  data: string;
  lastEventId: string | null;
}

export interface SseFrameParser {
  /** Feeds the next piece of the body; returns the frames completed by it. */
  push(chunk: string | Uint8Array): SseFrame[];
  /** The body ended: a frame not closed by an empty line is dropped, as the format says. */
  end(): SseFrame[];
}

/**
 * Reads a body frame by frame, as the server-sent events format dispatches them: fields
 * gather until an empty line; comments (`:`) and unknown fields are skipped; an `id` holding
 * NUL is ignored; a frame without data dispatches nothing but still moves the last event id.
 */
export function createSseFrameParser(): SseFrameParser {
  const lines = createLineSplitter();
  let lastEventId: string | null = null;
  let event = '';
  let data: string[] = [];

  function read(line: string): SseFrame | undefined {
    if (line === '') {
      const frame = data.length > 0 ? { event: event || 'message', data: data.join('\n'), lastEventId } : undefined;
      event = '';
      data = [];
      return frame;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) lastEventId = value;
    return undefined;
  }

  return {
    push: (chunk) => lines.push(chunk).flatMap((line) => read(line) ?? []),
    // Frames the end completes are dispatched; an unfinished one, or a line without its
    // break, is dropped.
    end: () => lines.end().lines.flatMap((line) => read(line) ?? []),
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
