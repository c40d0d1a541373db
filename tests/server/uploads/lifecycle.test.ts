import fs from 'node:fs/promises';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentSpoolFolder, spooledUploads } from '../../../server/uploads/spool';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { signInPerson, until, type Person } from '../chat/helpers';
import { facePhoto } from '../portraits/support';

/**
 * Issue #25 item 14: a client dropping an upload is its own business, not a server error
 * (it was logged at error level), and a process leaves no empty upload folder behind.
 */

type LogLine = Record<string, unknown> & { level: number; msg?: string };

describe.each(testDatabases())('upload lifecycle on $name', (kind) => {
  let app: TestApp | undefined;
  let person: Person;
  const lines: LogLine[] = [];
  beforeAll(async () => {
    app = await startTestApp(
      kind,
      { LOG_LEVEL: 'info' },
      {},
      {
        logStream: {
          write: (chunk: string) => {
            for (const line of chunk.split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
          },
        },
      },
    );
    person = await signInPerson(app, 'uploader@example.com', 100);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a client that drops its upload halfway is logged below error level, and its file goes', async () => {
    const server = app!;
    const photo = await facePhoto();
    const boundary = 'dropboundary';
    const start =
      `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\na portrait\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="user_image_file"; filename="me.jpg"\r\n` +
      'Content-Type: image/jpeg\r\n\r\n';
    const length = start.length + photo.length + `\r\n--${boundary}--\r\n`.length;
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'POST /api/face-swap/generate HTTP/1.1\r\nHost: localhost\r\n' +
        `Origin: ${server.url}\r\nCookie: ${person.jar.header()}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n` +
        start,
    );
    socket.write(photo.subarray(0, Math.floor(photo.length / 2)));
    // Once the server is writing the photo to its temporary file, the client goes.
    await until(async () => ((await spooledUploads()).length > 0 ? true : undefined));
    socket.destroy();
    await until(async () => ((await spooledUploads()).length === 0 ? true : undefined));
    // The dropped request's own lines (signing in wrote lines before it). Fastify writes
    // no 'request completed' for an answer nobody reads, so wait for its second line.
    const dropped = lines.find(
      (line) =>
        line.msg === 'incoming request' &&
        (line.req as { url?: string } | undefined)?.url === '/api/face-swap/generate',
    )?.reqId;
    expect(dropped).toBeDefined();
    const ofDropped = () => lines.filter((line) => line.reqId === dropped);
    await until(async () => (ofDropped().length > 1 ? true : undefined));
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(ofDropped().some((line) => line.level === 30 && /client went away/.test(line.msg ?? ''))).toBe(true);
  });

  it('closing the server removes the process’s upload folder', async () => {
    const folder = await currentSpoolFolder();
    expect(folder).toBeDefined();
    expect((await fs.stat(folder!)).isDirectory()).toBe(true);
    await app!.close();
    app = undefined;
    await expect(fs.stat(folder!)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await currentSpoolFolder()).toBeUndefined();
  });
});
