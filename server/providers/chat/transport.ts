import { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Agent, request, type Dispatcher } from 'undici';

/**
 * A `fetch` for the `openai` SDK over undici's request API, with its own keep-alive
 * pool. Node's built-in fetch spends a large share of a reply's first-token time on
 * WHATWG request and stream set-up before the request leaves; the request API skips
 * most of it. The SDK only needs what this returns: status, headers and a body stream.
 */
export function createUndiciFetch(
  dispatcher: Dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 256 }),
): typeof fetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw new TypeError('createUndiciFetch only sends string or byte bodies');
    }
    const response = await request(url, {
      method: init.method ?? 'GET',
      headers,
      body: body ?? undefined,
      signal: init.signal ?? undefined,
      dispatcher,
    });
    const responseHeaders = new Headers();
    for (const [key, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(key, v);
    }
    const empty = response.statusCode === 204 || response.statusCode === 304 || init.method === 'HEAD';
    if (empty) response.body.resume();
    // Pulled through the body's async iterator: cancelling the web stream ends the
    // iteration and destroys the socket's body. (Readable.toWeb can still push a chunk
    // that was on its way into the closed stream, which throws outside any caller.)
    const stream = empty ? null : (WebReadableStream.from(response.body) as ReadableStream<Uint8Array>);
    return new Response(stream, {
      status: response.statusCode,
      statusText: response.statusText,
      headers: responseHeaders,
    });
  };
}
