import { afterEach, describe, expect, it, vi } from 'vitest';
import { readChatStream } from '../../src/api/chat';
import { readJobStream } from '../../src/api/jobs';
import { chatProblem } from '../../src/domain/chat';
import type { ChatSendEvent } from '../../src/machines/chat-send';
import type { JobStreamEvent } from '../../src/machines/job-stream';

/*
 * The browser's two event-stream readers as the network hands them bytes: SPEC section 7's
 * chat stream (`data:` lines of JSON, `data: [DONE]` at the end, unparsable lines ignored) and
 * the user's event stream (issue #28: `id`, `event: job | reply | ready`). A read may end
 * anywhere, a line break may be CRLF, and the body may end before the last empty line. Our
 * API is faked at fetch.
 */

interface Seen {
  url: string;
  init: RequestInit;
}

/** Answers every fetch with a 200 event stream whose body arrives in these reads. */
function serve(reads: Uint8Array[]): Seen[] {
  const seen: Seen[] = [];
  vi.stubGlobal('fetch', (url: string, init: RequestInit = {}) => {
    seen.push({ url, init });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const read of reads) controller.enqueue(read);
        controller.close();
      },
    });
    return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }));
  });
  return seen;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

/** The body cut into two reads at every byte, and one byte per read. */
function cuts(text: string): Uint8Array[][] {
  const bytes = new TextEncoder().encode(text);
  const halves = Array.from({ length: bytes.length + 1 }, (_, i) => [bytes.slice(0, i), bytes.slice(i)]);
  return [...halves, Array.from(bytes, (b) => Uint8Array.of(b))];
}

const chatInput = { conversationId: 7, message: 'Привет', model: 'gpt-4o', maxTokens: 2000, contextTokensLimit: 500 };

async function chatEvents(reads: Uint8Array[]): Promise<{ events: ChatSendEvent[]; seen: Seen[] }> {
  const seen = serve(reads);
  const events: ChatSendEvent[] = [];
  await readChatStream(chatInput, new AbortController().signal, (event) => events.push(event));
  return { events, seen };
}

describe('the chat stream as the browser reads it (SPEC section 7)', () => {
  const frames = [
    ': keep-alive',
    'data: {"content":"При"}',
    // A line that cannot be parsed is ignored, and so is a frame's name.
    'data: {not json',
    'event: message\r\ndata: {"content":"вет"}',
    // Each data line carries its own JSON.
    'data: {"content":", "}\r\ndata: {"content":"мир 👋"}',
  ];
  const chunks: ChatSendEvent[] = [
    { type: 'STREAM.CHUNK', content: 'При' },
    { type: 'STREAM.CHUNK', content: 'вет' },
    { type: 'STREAM.CHUNK', content: ', ' },
    { type: 'STREAM.CHUNK', content: 'мир 👋' },
  ];

  it('posts to the conversation’s stream and reads the same reply wherever the reads cut it, CRLF and all', async () => {
    // [DONE] after no last frame (a reply stopped on the server), without its line break:
    // the end of the body closes it.
    const body = `${frames.join('\r\n\r\n')}\r\n\r\ndata: [DONE]`;
    for (const reads of cuts(body)) {
      const { events, seen } = await chatEvents(reads);
      expect(events, `${reads.length} reads, the first ${reads[0]?.length} bytes`).toEqual([
        ...chunks,
        { type: 'STREAM.ENDED' },
      ]);
      expect(seen.map((s) => [s.url, s.init.method])).toEqual([['/llm/conversations/7/stream', 'POST']]);
    }
  });

  it('reads a last frame whose empty line never came, and a body that ends without [DONE] is lost', async () => {
    const complete = { isComplete: true, tokensUsed: 12, balanceAfter: 38, messageId: 44 };
    const ended = await chatEvents([
      new TextEncoder().encode(`${frames.join('\n\n')}\n\ndata: ${JSON.stringify(complete)}\n`),
    ]);
    expect(ended.events).toEqual([
      ...chunks,
      { type: 'STREAM.COMPLETE', tokensUsed: 12, balanceAfter: 38, messageId: 44 },
    ]);
    const cut = await chatEvents([new TextEncoder().encode(`${frames.slice(0, 2).join('\n\n')}\n\n`)]);
    expect(cut.events).toEqual([
      { type: 'STREAM.CHUNK', content: 'При' },
      { type: 'STREAM.LOST', problem: chatProblem('streamErrorFallback') },
    ]);
  });
});

describe('the user’s event stream as the browser reads it (issue #28)', () => {
  const job = {
    id: 8,
    kind: 'generation',
    model: 'core',
    prompt: 'Сова 🦉',
    state: 'running',
    cost: 3,
    position: null,
    etaSeconds: 20,
    progress: 0.5,
    createdAt: '2026-11-27T10:00:00.000Z',
    startedAt: '2026-11-27T10:00:01.000Z',
    finishedAt: null,
    error: null,
    image: null,
  };
  const reply = { conversationId: 3, requestId: 9, model: 'gpt-4o', content: 'Hel', done: false };
  const frames = [
    'id: 41\nevent: ready\ndata: {}',
    ': ping',
    `id: 42\nevent: job\ndata: ${JSON.stringify({ job, balance: 47 })}`,
    `id: 43\nevent: reply\ndata: ${JSON.stringify(reply)}`,
    // No id of its own: the stream's last one stays.
    'event: job\ndata: {"not":"a job event"}',
  ];
  const expected: JobStreamEvent[] = [
    { type: 'STREAM.OPENED' },
    { type: 'STREAM.READY', id: '41' },
    { type: 'STREAM.EVENT', id: '42', event: { job, balance: 47 } as never },
    { type: 'STREAM.REPLY', id: '43', event: reply },
    { type: 'STREAM.READY', id: '43' },
    // The end of the body: the chart reconnects.
    { type: 'STREAM.FAILED' },
  ];

  async function jobEvents(reads: Uint8Array[], lastEventId: string | null = null) {
    const seen = serve(reads);
    const events: JobStreamEvent[] = [];
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    await readJobStream({ lastEventId }, new AbortController().signal, (event) => events.push(event));
    return { events, seen };
  }

  it('reads each frame with its id wherever the reads cut it, CRLF and all; a frame the body ended before its empty line is dropped', async () => {
    // The last frame never got its empty line: the format drops it.
    const body = `${frames.join('\r\n\r\n')}\r\n\r\nid: 44\r\nevent: job\r\ndata: {}\r\n`;
    for (const reads of cuts(body)) {
      const { events } = await jobEvents(reads);
      expect(events, `${reads.length} reads, the first ${reads[0]?.length} bytes`).toEqual(expected);
    }
  });

  it('asks for the stream with the id to resume after', async () => {
    const { seen } = await jobEvents([new TextEncoder().encode(`${frames.join('\n\n')}\n\n`)], '40');
    expect(seen.map((s) => s.url)).toEqual(['/api/events']);
    expect(new Headers(seen[0]?.init.headers).get('Last-Event-ID')).toBe('40');
  });
});
