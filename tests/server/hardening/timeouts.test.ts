import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spooledUploads } from '../../../server/uploads/spool';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { signInPerson, type Person } from '../chat/helpers';
import { facePhoto } from '../portraits/support';

/**
 * Issue #25 item 13: a body (or headers) trickled a byte at a time was held forever. With
 * HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS set small here, a trickling client is cut
 * within a bounded time and answered 408 in the app's error shape.
 */

const HEADERS_TIMEOUT_MS = 400;
const REQUEST_TIMEOUT_MS = 800;
/** Far longer than either timeout and Node's check interval, far shorter than "forever". */
const BOUND_MS = 5000;

interface Trickled {
  /** Everything the server sent before closing the connection. */
  raw: string;
  elapsedMs: number;
}

/**
 * Opens a connection, writes `head` at once, then one byte of `drip` every 50 ms (and
 * again from its start when it runs out) until the server closes the connection.
 */
function trickle(app: TestApp, head: string | Buffer, drip: string | Buffer): Promise<Trickled> {
  const { port } = new URL(app.url);
  const bytes = Buffer.from(drip);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    let at = 0;
    let timer: NodeJS.Timeout | undefined;
    const bound = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after ${BOUND_MS} ms`));
    }, BOUND_MS);
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (!socket.writable) return;
        socket.write(bytes.subarray(at % bytes.length, (at % bytes.length) + 1));
        at += 1;
      }, 50);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may reset while a byte is on its way: what it sent before still counts.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(bound);
      resolve({ raw: Buffer.concat(chunks).toString('utf8'), elapsedMs: Date.now() - started });
    });
  });
}

function parseAnswer(raw: string): { status: number; headers: string; body: unknown } {
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const text = end < 0 ? '' : raw.slice(end + 4);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status, headers: head.toLowerCase(), body };
}

const TIMEOUT_BODY = { success: false, code: 'REQUEST_TIMEOUT', message: 'Please try again later' };

describe.each(testDatabases())('slow clients on $name', (kind) => {
  let app: TestApp;
  let person: Person;
  beforeAll(async () => {
    app = await startTestApp(kind, {
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    });
    person = await signInPerson(app, 'slow@example.com', 100);
  });
  afterAll(async () => {
    await app.close();
  });

  it('headers trickled a byte at a time are cut with 408 in our shape', async () => {
    const { raw, elapsedMs } = await trickle(app, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n', 'X-Slow: abcdef\r\n');
    const answer = parseAnswer(raw);
    expect(answer.status).toBe(408);
    expect(answer.headers).toContain('content-type: application/json');
    expect(answer.body).toEqual(TIMEOUT_BODY);
    expect(elapsedMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
  });

  it('an anonymous JSON body trickled a byte at a time is cut with 408 in our shape', async () => {
    const body = JSON.stringify({ note: 'x'.repeat(500) });
    const head =
      'POST /auth/logout HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${body.length}\r\n\r\n`;
    const { raw, elapsedMs } = await trickle(app, head, body);
    const answer = parseAnswer(raw);
    expect(answer.status).toBe(408);
    expect(answer.body).toEqual(TIMEOUT_BODY);
    expect(elapsedMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
  });

  it('a photo upload trickled a byte at a time is cut with 408, and its temporary file goes', async () => {
    const photo = await facePhoto();
    const boundary = 'slowboundary';
    const start = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\na portrait\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="user_image_file"; filename="me.jpg"\r\n` +
        'Content-Type: image/jpeg\r\n\r\n',
    );
    // Far more than the test will ever send.
    const length = start.length + photo.length + 1000;
    const head =
      'POST /api/face-swap/generate HTTP/1.1\r\nHost: localhost\r\n' +
      `Origin: ${app.url}\r\nCookie: ${person.jar.header()}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`;
    const { raw } = await trickle(app, Buffer.concat([Buffer.from(head), start, photo.subarray(0, 4096)]), photo);
    const answer = parseAnswer(raw);
    expect(answer.status).toBe(408);
    expect(answer.body).toEqual(TIMEOUT_BODY);
    // The spooled part of the photo is removed once the request is cut.
    const left = async () => (await spooledUploads()).length;
    const deadline = Date.now() + BOUND_MS;
    while ((await left()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await left()).toBe(0);
  });

  it('a request that arrives in time is not affected', async () => {
    const response = await fetch(`${app.url}/healthz`);
    expect(response.status).toBe(200);
  });
});
