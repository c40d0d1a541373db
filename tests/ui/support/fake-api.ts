import { waitFor } from '@testing-library/react';

/**
 * A fake of OUR HTTP API at the fetch boundary, for the screen tests: the real API client
 * (wretch, the SSE reader) runs unchanged and calls `fetch`, which lands here.
 *
 * A route either answers at once (`on`) or holds the request until the test answers it
 * (`hold`, then `answer`), which is how a model-based path decides when the server replies
 * and what it says. A request no route knows fails the test: nothing reaches a server by
 * accident.
 */
export interface FakeRequest {
  method: string;
  url: URL;
  /** Path and query, e.g. /api/images/my-images?page=1&limit=6 */
  path: string;
  headers: Headers;
  /** Parsed JSON, a FormData, text, or undefined. */
  body: unknown;
  signal: AbortSignal | undefined;
  answered: boolean;
}

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A server-sent event stream the test writes to (the chat's replies). */
export interface StreamWriter {
  /** One `data:` line carrying this JSON (or the raw text given). */
  data(value: unknown): void;
  /** Raw bytes as the server would write them (comments, partial lines). */
  raw(text: string): void;
  /** `data: [DONE]` and the end of the body. */
  done(): void;
  /** The end of the body, with nothing more written (the server closed the stream). */
  end(): void;
  /** The connection breaks. */
  fail(): void;
}

type Matcher = string | RegExp;
type Handler = (request: FakeRequest) => Reply | Response | Promise<Reply | Response>;

interface Route {
  method: string;
  matcher: Matcher;
  handler: Handler | 'hold';
}

interface Held {
  request: FakeRequest;
  resolve: (response: Response) => void;
  reject: (error: unknown) => void;
}

const matches = (matcher: Matcher, path: string) =>
  typeof matcher === 'string' ? path.split('?')[0] === matcher : matcher.test(path);

export function json(body: unknown, status = 200): Reply {
  return { status, body };
}

/** Our error body (DESIGN section 5): `{success: false, code, message, details}`. */
export function apiError(status: number, code: string, message: string, details?: Record<string, unknown>): Reply {
  return { status, body: { success: false, code, message, ...(details ? { details } : {}) } };
}

export class FakeApi {
  readonly requests: FakeRequest[] = [];
  private readonly routes: Route[] = [];
  private readonly held: Held[] = [];
  private readonly unknown: string[] = [];

  /** Answers every matching request at once. Later routes win over earlier ones. */
  on(method: string, matcher: Matcher, handler: Handler | Reply): this {
    this.routes.unshift({ method, matcher, handler: typeof handler === 'function' ? handler : () => handler });
    return this;
  }

  /** Answers matching requests that no other route takes (the app's usual calls). */
  fallback(method: string, matcher: Matcher, handler: Handler | Reply): this {
    this.routes.push({ method, matcher, handler: typeof handler === 'function' ? handler : () => handler });
    return this;
  }

  /** Holds every matching request until `answer` (or `stream`) releases it. */
  hold(method: string, matcher: Matcher): this {
    this.routes.unshift({ method, matcher, handler: 'hold' });
    return this;
  }

  /** The requests that reached a route, optionally only those of one method and path. */
  sent(method?: string, matcher?: Matcher): FakeRequest[] {
    return this.requests.filter(
      (r) => (method === undefined || r.method === method) && (matcher === undefined || matches(matcher, r.path)),
    );
  }

  /** Waits for the oldest held request of this route and answers it. */
  async answer(method: string, matcher: Matcher, reply: Reply): Promise<FakeRequest> {
    const held = await this.waitForHeld(method, matcher);
    held.resolve(toResponse(reply));
    return held.request;
  }

  /**
   * Waits for a held request of this route and answers it and every other one held: React's
   * development double mount starts a screen's actor twice, and a request nobody awaits any
   * more (the route moved away and back) is still held.
   */
  async answerAll(method: string, matcher: Matcher, reply: Reply): Promise<void> {
    await this.answer(method, matcher, reply);
    while (this.isHeld(method, matcher)) await this.answer(method, matcher, reply);
  }

  /** Waits for the oldest held request of this route and fails it as a network error would. */
  async breakConnection(method: string, matcher: Matcher): Promise<FakeRequest> {
    const held = await this.waitForHeld(method, matcher);
    held.reject(new TypeError('Failed to fetch'));
    return held.request;
  }

  /** Waits for the oldest held request of this route and answers with an event stream. */
  async stream(method: string, matcher: Matcher): Promise<{ request: FakeRequest; writer: StreamWriter }> {
    const held = await this.waitForHeld(method, matcher);
    const { response, writer } = eventStream(held.request);
    held.resolve(response);
    return { request: held.request, writer };
  }

  /**
   * Answers matching requests that no other route takes with an event stream that stays open
   * and says nothing until the request is aborted (the job events' stream of a page whose
   * suite is about something else).
   */
  quietStream(method: string, matcher: Matcher): this {
    this.routes.push({ method, matcher, handler: (request) => eventStream(request).response });
    return this;
  }
  /** Whether a request of this route is waiting for its answer. */
  isHeld(method: string, matcher: Matcher): boolean {
    return this.held.some((h) => h.request.method === method && matches(matcher, h.request.path));
  }

  /** Paths that reached no route: the test fails on them (see `assertNoStrays`). */
  strays(): readonly string[] {
    return this.unknown;
  }

  private async waitForHeld(method: string, matcher: Matcher): Promise<Held> {
    let found: Held | undefined;
    await waitFor(
      () => {
        found = this.held.find((h) => h.request.method === method && matches(matcher, h.request.path));
        if (!found) throw new Error(`no ${method} ${String(matcher)} is waiting for an answer`);
      },
      { timeout: 10_000 },
    );
    this.held.splice(this.held.indexOf(found!), 1);
    found!.request.answered = true;
    return found!;
  }

  /** The `fetch` the app sees. */
  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : undefined;
    const url = new URL(
      request ? request.url : input instanceof URL ? input.href : (input as string),
      'http://localhost',
    );
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    const headers = new Headers(init?.headers ?? request?.headers);
    const signal = init?.signal ?? request?.signal ?? undefined;
    const fake: FakeRequest = {
      method,
      url,
      path: url.pathname + url.search,
      headers,
      body: parseBody(init?.body),
      signal,
      answered: false,
    };
    const route = this.routes.find((r) => r.method === method && matches(r.matcher, fake.path));
    if (!route) {
      this.unknown.push(`${method} ${fake.path}`);
      return toResponse(apiError(404, 'NOT_FOUND', `the fake API has no route for ${method} ${fake.path}`));
    }
    this.requests.push(fake);
    if (signal?.aborted) throw new DOMException('The operation was aborted.', 'AbortError');
    if (route.handler !== 'hold') {
      fake.answered = true;
      const reply = await route.handler(fake);
      return reply instanceof Response ? reply : toResponse(reply);
    }
    return new Promise<Response>((resolve, reject) => {
      const held: Held = { request: fake, resolve, reject };
      this.held.push(held);
      signal?.addEventListener('abort', () => {
        const index = this.held.indexOf(held);
        if (index >= 0) this.held.splice(index, 1);
        reject(new DOMException('The operation was aborted.', 'AbortError'));
      });
    });
  };
}

/** A 200 event stream the test writes to; it ends as the request is aborted. */
function eventStream(request: FakeRequest): { response: Response; writer: StreamWriter } {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
  });
  const write = (text: string) => {
    if (!closed) controller.enqueue(encoder.encode(text));
  };
  request.signal?.addEventListener('abort', () => {
    if (closed) return;
    closed = true;
    controller.error(new DOMException('The operation was aborted.', 'AbortError'));
  });
  return {
    response: new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    writer: {
      data: (value) => write(`data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`),
      raw: write,
      done: () => {
        write('data: [DONE]\n\n');
        if (!closed) {
          closed = true;
          controller.close();
        }
      },
      end: () => {
        if (!closed) {
          closed = true;
          controller.close();
        }
      },
      fail: () => {
        if (!closed) {
          closed = true;
          controller.error(new TypeError('network error'));
        }
      },
    },
  };
}

function parseBody(body: BodyInit | null | undefined): unknown {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as unknown;
    } catch {
      return body;
    }
  }
  return body;
}

function toResponse(reply: Reply): Response {
  const status = reply.status ?? 200;
  const hasBody = reply.body !== undefined && status !== 204;
  return new Response(hasBody ? JSON.stringify(reply.body) : null, {
    status,
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...reply.headers },
  });
}
