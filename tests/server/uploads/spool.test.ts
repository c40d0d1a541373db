import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HEAD_BYTES, spooledUploads, spoolUpload } from '../../../server/uploads/spool';

const CHUNK = 64 * 1024;

/** `total` random bytes as a stream of 64 KB chunks, as a socket delivers an upload. */
function upload(total: number): { bytes: Buffer; stream: Readable } {
  const bytes = randomBytes(total);
  const chunks: Buffer[] = [];
  for (let at = 0; at < total; at += CHUNK) chunks.push(bytes.subarray(at, at + CHUNK));
  return { bytes, stream: Readable.from(chunks, { objectMode: false }) };
}

describe('spoolUpload', () => {
  it('writes every byte up to the limit in order, counts the rest, and keeps the first bytes', async () => {
    // Far past the 2 MB that may wait for the disk, so reading pauses and resumes on the way.
    const { bytes, stream } = upload(12 * 1024 * 1024 + 123);
    const keep = 10 * 1024 * 1024;
    const spooled = await spoolUpload(stream, keep);
    try {
      expect(spooled.size).toBe(bytes.length);
      expect(spooled.head).toEqual(bytes.subarray(0, HEAD_BYTES));
      expect((await fs.readFile(spooled.path)).equals(bytes.subarray(0, keep))).toBe(true);
      expect((await fs.stat(spooled.path)).mode & 0o777).toBe(0o600);
    } finally {
      await spooled.dispose();
    }
    expect(await spooledUploads()).toEqual([]);
  });

  it('removes the file when the client goes away mid-upload', async () => {
    const stream = new PassThrough();
    const spooling = spoolUpload(stream, 10 * 1024 * 1024);
    stream.write(randomBytes(3 * CHUNK));
    await new Promise((resolve) => setImmediate(resolve));
    // A destroyed socket: the stream closes without an end.
    stream.destroy();
    await expect(spooling).rejects.toThrow(/premature close/i);
    expect(await spooledUploads()).toEqual([]);
  });

  it('removes the file and passes the error on when the stream fails', async () => {
    const stream = new PassThrough();
    const spooling = spoolUpload(stream, 10 * 1024 * 1024);
    stream.write(randomBytes(CHUNK));
    stream.destroy(new Error('multipart: unexpected end of form'));
    await expect(spooling).rejects.toThrow('multipart: unexpected end of form');
    expect(await spooledUploads()).toEqual([]);
  });
});
