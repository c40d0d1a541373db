import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUndiciFetch } from '../../../../server/providers/chat/transport';

describe('createUndiciFetch', () => {
  let server: Server;
  let url: string;
  const fetchOverUndici = createUndiciFetch();

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.url === '/slow') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('first ');
          setTimeout(() => res.end('late'), 2000).unref();
          return;
        }
        if (req.url === '/long') {
          // Keeps sending after the client has given up on the body.
          res.writeHead(500, { 'content-type': 'text/plain' });
          let left = 200;
          const more = () => {
            if (left-- <= 0 || res.destroyed) return res.end();
            res.write('x'.repeat(16 * 1024), () => setImmediate(more));
          };
          more();
          return;
        }
        if (req.url === '/empty') {
          res.writeHead(204);
          res.end();
          return;
        }
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3', 'x-many': ['a', 'b'] });
        res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the method, headers and body, and returns status, headers and body as fetch would', async () => {
    const response = await fetchOverUndici(new URL('/echo', url), {
      method: 'POST',
      headers: new Headers({ authorization: 'Bearer k', 'content-type': 'application/json' }),
      body: '{"a":1}',
    });
    expect(response.status).toBe(429);
    expect(response.ok).toBe(false);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(response.headers.get('x-many')).toBe('a, b');
    expect(await response.json()).toEqual({ method: 'POST', auth: 'Bearer k', body: '{"a":1}' });
  });

  it('answers a bodiless status with no body', async () => {
    const response = await fetchOverUndici(`${url}/empty`);
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('lets a caller cancel a body that is still arriving (as the SDK does before a retry)', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await fetchOverUndici(`${url}/long`);
      const reader = response.body!.getReader();
      await reader.read();
      await reader.cancel();
    }
    // An error body that arrived with the headers, cancelled unread.
    for (let i = 0; i < 20; i++) await (await fetchOverUndici(`${url}/echo`)).body!.cancel();
    // A chunk pushed into a cancelled stream would surface here as an uncaught error.
    await new Promise((resolve) => setTimeout(resolve, 200));
  });

  it('stops reading when the signal aborts mid-body', async () => {
    const controller = new AbortController();
    const response = await fetchOverUndici(`${url}/slow`, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first ');
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
  });
});
