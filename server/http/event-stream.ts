import type { ServerResponse } from 'node:http';

/**
 * Opens a server-sent events answer on a hijacked response (the chat's reply stream and the
 * user's event stream): never cached or transformed, kept open, and passed through event by
 * event by proxies that would otherwise buffer it (nginx: x-accel-buffering).
 */
export function openEventStream(res: ServerResponse, requestId: string): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': requestId,
  });
  res.flushHeaders();
}
