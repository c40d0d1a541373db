import { describe, expect, it } from 'vitest';
import {
  SSE_DONE,
  chatStreamEventSchema,
  createEventStreamReader,
  encodeSseEvent,
  createChatStreamReader,
  encodeSseData,
  sseComment,
  toChatStreamEvent,
} from '../../src/domain/sse';
import type { SseFrame, ChatStreamItem } from '../../src/domain/sse';

function parseAll(chunks: Array<string | Uint8Array>): ChatStreamItem[] {
  const parser = createChatStreamReader();
  const events: ChatStreamItem[] = [];
  for (const c of chunks) events.push(...parser.push(c));
  events.push(...parser.end());
  return events;
}

describe('SSE frames', () => {
  it('encodes one data line per event', () => {
    expect(encodeSseData({ content: 'a\nb' })).toBe('data: {"content":"a\\nb"}\n\n');
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
  });

  it('refuses values JSON cannot carry', () => {
    expect(() => encodeSseData(undefined)).toThrow(TypeError);
  });

  it('writes comments, one colon per line', () => {
    expect(sseComment('heartbeat')).toBe(': heartbeat\n\n');
    expect(sseComment('a\ndata: x')).toBe(': a\n: data: x\n\n');
    expect(parseAll([sseComment('a\ndata: {"x":1}')])).toEqual([]);
    expect(sseComment()).toBe(': \n\n');
  });
});

describe('createChatStreamReader', () => {
  const events = [
    { content: 'Привет, ' },
    { content: 'мир 👋 "quoted"\nnext line' },
    { isComplete: true, tokensUsed: 12, billing: { inputTokens: 5, outputTokens: 7, cost: 1 } },
  ];
  const body = `${sseComment('connected')}${events.map(encodeSseData).join('')}${sseComment('ping')}${SSE_DONE}`;
  const expected: ChatStreamItem[] = [...events.map((value) => ({ type: 'data' as const, value })), { type: 'done' }];

  it('reads a whole body at once', () => {
    expect(parseAll([body])).toEqual(expected);
  });

  it('reads the body split at every string offset', () => {
    for (let i = 0; i <= body.length; i++) {
      expect(parseAll([body.slice(0, i), body.slice(i)]), `split at ${i}`).toEqual(expected);
    }
  });

  it('reads the body split at every byte offset, through multi-byte characters', () => {
    const bytes = new TextEncoder().encode(body);
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseAll([bytes.slice(0, i), bytes.slice(i)]), `split at byte ${i}`).toEqual(expected);
    }
  });

  it('reads the body one byte at a time', () => {
    const bytes = new TextEncoder().encode(body);
    expect(parseAll(Array.from(bytes, (b) => Uint8Array.of(b)))).toEqual(expected);
  });

  it('accepts CRLF and lone CR line breaks, split anywhere', () => {
    for (const eol of ['\r\n', '\r']) {
      // JSON escapes the newline inside the content, so only real line breaks change here
      const text = body.replace(/\n/g, eol);
      for (let i = 0; i <= text.length; i++) {
        expect(parseAll([text.slice(0, i), text.slice(i)]), `${JSON.stringify(eol)} split at ${i}`).toEqual(expected);
      }
    }
  });

  it('ignores comments, other fields and lines that cannot be parsed', () => {
    const text = [
      ': comment',
      'event: message',
      'id: 7',
      'retry: 1000',
      'data: {not json',
      'data: ',
      'data: {"content":"ok"}',
      'data:{"content":"no space"}',
      'garbage line',
      // Not data lines, though their ends read as JSON.
      'id: 12345',
      'event:{"content":"not data"}',
      'data: [DONE]',
      '',
    ].join('\n');
    expect(parseAll([text])).toEqual([
      { type: 'data', value: { content: 'ok' } },
      { type: 'data', value: { content: 'no space' } },
      { type: 'done' },
    ]);
  });

  it('waits for the end of the frame before reporting it', () => {
    const parser = createChatStreamReader();
    expect(parser.push('data: {"content":"a"}')).toEqual([]);
    expect(parser.push('\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ type: 'data', value: { content: 'a' } }]);
    expect(parser.push('data: [DO')).toEqual([]);
    expect(parser.push('NE]')).toEqual([]);
    // a body that ends without a final line break still delivers its last line
    expect(parser.end()).toEqual([{ type: 'done' }]);
  });

  it('delivers nothing for a last line without a break that is not data', () => {
    const parser = createChatStreamReader();
    expect(parser.push('data: {"content":"a"}\n\n: ping')).toEqual([{ type: 'data', value: { content: 'a' } }]);
    expect(parser.end()).toEqual([]);
    const other = createChatStreamReader();
    expect(other.push('data: {not json')).toEqual([]);
    expect(other.end()).toEqual([]);
  });
});

/**
 * The job events' stream (issue #28, GET /api/events) is read by its frames, as the
 * server-sent events format (WHATWG HTML, "Interpreting an event stream") dispatches them.
 */
describe('createEventStreamReader', () => {
  function framesOf(chunks: Array<string | Uint8Array>): SseFrame[] {
    const parser = createEventStreamReader();
    const frames: SseFrame[] = [];
    for (const c of chunks) frames.push(...parser.push(c));
    frames.push(...parser.end());
    return frames;
  }
  const body =
    'id: 41\nevent: ready\ndata: {}\n\n' +
    ': ping\n\n' +
    'id: 42\nevent: job\ndata: {"job":{"id":7,"prompt":"Сова 🦉"},"balance":38}\n\n' +
    'event: job\ndata: {"a":1}\ndata: {"b":2}\n\n';
  const expected: SseFrame[] = [
    { event: 'ready', data: '{}', lastEventId: '41' },
    { event: 'job', data: '{"job":{"id":7,"prompt":"Сова 🦉"},"balance":38}', lastEventId: '42' },
    // No id of its own: the stream's last id stays; two data lines join with a line break.
    { event: 'job', data: '{"a":1}\n{"b":2}', lastEventId: '42' },
  ];

  it('dispatches a frame at its empty line, with its name, data and the last id', () => {
    expect(framesOf([body])).toEqual(expected);
  });

  it('reads the body split at every byte, and with CRLF or CR line breaks', () => {
    const bytes = new TextEncoder().encode(body);
    for (let i = 0; i <= bytes.length; i++) {
      expect(framesOf([bytes.slice(0, i), bytes.slice(i)]), `split at byte ${i}`).toEqual(expected);
    }
    for (const eol of ['\r\n', '\r']) {
      const text = body.replace(/\n/g, eol);
      for (let i = 0; i <= text.length; i++) {
        expect(framesOf([text.slice(0, i), text.slice(i)]), `${JSON.stringify(eol)} at ${i}`).toEqual(expected);
      }
    }
  });

  it('names a frame without event "message", skips comments and unknown fields, takes one space after the colon', () => {
    expect(framesOf(['retry: 10\nfoo: bar\n:comment\ndata:x\ndata:  y\n\n'])).toEqual([
      { event: 'message', data: 'x\n y', lastEventId: null },
    ]);
    // A field without a colon is its name with an empty value.
    expect(framesOf(['data\n\n'])).toEqual([{ event: 'message', data: '', lastEventId: null }]);
  });

  it('dispatches nothing for a frame without data, and its name does not pass to the next', () => {
    expect(framesOf(['event: job\n\ndata: z\n\n'])).toEqual([{ event: 'message', data: 'z', lastEventId: null }]);
  });

  it('ignores an id holding NUL', () => {
    expect(framesOf(['id: 3\ndata: a\n\nid: 4\u0000\ndata: b\n\n'])).toEqual([
      { event: 'message', data: 'a', lastEventId: '3' },
      { event: 'message', data: 'b', lastEventId: '3' },
    ]);
  });

  it('reads back what the server writes, a text with line breaks and all', () => {
    const data = { job: { id: 7, prompt: 'Сова\nв лесу\r\n' }, balance: 38 };
    expect(framesOf([encodeSseEvent(42, 'job', data) + encodeSseEvent(43, 'ready', {})])).toEqual([
      { event: 'job', data: JSON.stringify(data), lastEventId: '42' },
      { event: 'ready', data: '{}', lastEventId: '43' },
    ]);
  });

  it('drops a frame the body ended before its empty line', () => {
    const parser = createEventStreamReader();
    expect(parser.push('id: 9\nevent: job\ndata: {}')).toEqual([]);
    expect(parser.end()).toEqual([]);
    expect(framesOf(['data: a\n\ndata: b\n'])).toEqual([{ event: 'message', data: 'a', lastEventId: null }]);
  });
});

describe('chatStreamEventSchema', () => {
  it('accepts every field of our stream events', () => {
    const event = {
      content: 'x',
      isComplete: true,
      tokensUsed: 30,
      contextInfo: { messagesIncluded: 3, tokensIncluded: 120, contextTokensLimit: 500 },
      billing: { inputTokens: 120, outputTokens: 30, cost: 2 },
      balanceAfter: 48,
      error: 'INSUFFICIENT_TOKENS',
      message: 'Insufficient tokens',
      conversationId: 4,
      messageId: 17,
    };
    expect(chatStreamEventSchema.parse(event)).toEqual(event);
    expect(toChatStreamEvent({})).toEqual({});
  });

  it('drops values that are not our events', () => {
    expect(toChatStreamEvent('text')).toBeUndefined();
    expect(toChatStreamEvent({ content: 5 })).toBeUndefined();
    expect(toChatStreamEvent({ contextInfo: { messagesIncluded: 1 } })).toBeUndefined();
  });
});
