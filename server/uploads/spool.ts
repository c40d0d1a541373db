import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

/**
 * An uploaded file written to a private temporary file as it arrives, instead of being
 * held in memory: ten simultaneous 8 MB photos cost the server disk pages, not 80 MB of
 * its own memory plus the copies of joining their chunks. The image decoder then reads
 * the file itself. Only the first bytes (to tell the type) stay in memory.
 *
 * The file belongs to one request: `dispose()` removes it, and the route calls it when the
 * request ends, whatever the outcome, so an upload is never kept (SPEC: the photo is not
 * stored). Files live in a folder of this process's own, made on first use, readable only
 * by this user.
 */
export interface SpooledFile {
  path: string;
  /** Every byte the client sent, also those past `keep` that were only counted. */
  size: number;
  /** The first bytes, for telling the type (at most {@link HEAD_BYTES}). */
  head: Buffer;
  dispose(): Promise<void>;
}

/** Enough for every signature the upload checks read (server/uploads/image-upload.ts). */
export const HEAD_BYTES = 64;

/**
 * Chunks are written in batches of about this size: a write per 64 KB chunk would cost a
 * thread-pool round trip each.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;
/**
 * A batch is written while the next ones are read; reading waits only when this much is
 * still on its way to the disk (a disk slower than the network), so an upload never
 * holds more than this in memory.
 */
const MAX_UNWRITTEN_BYTES = 2 * WRITE_BATCH_BYTES;

let folder: Promise<string> | undefined;

function spoolFolder(): Promise<string> {
  folder ??= fs.mkdtemp(path.join(os.tmpdir(), 'imagegen-uploads-'));
  return folder;
}

/** The folder of this process's uploads, when one exists right now. */
export async function currentSpoolFolder(): Promise<string | undefined> {
  return folder;
}

/**
 * Removes the folder when no upload is in it, so a process leaves nothing behind once
 * its server closes. An upload still being served keeps it (the next release, or the
 * next server's, removes it); a later upload makes a new one.
 */
export async function releaseSpoolFolder(): Promise<void> {
  const current = folder;
  if (!current) return;
  const dir = await current.catch(() => undefined);
  if (folder !== current) return;
  if (!dir) {
    folder = undefined;
    return;
  }
  try {
    await fs.rmdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return;
    if (code !== 'ENOENT') throw error;
  }
  if (folder === current) folder = undefined;
}

/** Opens a new private file in the folder, making the folder again if it was released meanwhile. */
async function openSpoolFile(): Promise<{ file: string; handle: fs.FileHandle }> {
  for (let attempt = 0; ; attempt += 1) {
    const dir = await spoolFolder();
    const file = path.join(dir, randomUUID());
    try {
      return { file, handle: await fs.open(file, 'wx', 0o600) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0) throw error;
      if (folder !== undefined && (await folder.catch(() => undefined)) === dir) folder = undefined;
    }
  }
}

/**
 * Writes `stream` to a new temporary file, keeping at most `keep` bytes on disk; the rest
 * are read and counted (for the "Current size" of a too-large file) but not written.
 * On any error the file is removed before the error is rethrown.
 *
 * The stream is read by its 'data' events rather than `for await`: a Readable's async
 * iterator costs a promise and a tick per chunk, a fifth of a large upload's own cost
 * (docs/benchmarks.md, portrait).
 */
export async function spoolUpload(stream: Readable, keep: number): Promise<SpooledFile> {
  // Settles on the end, an error, or a close before the end (a client gone mid-upload);
  // listened to from the start, so a failure while the file is opened is caught too.
  const received = finished(stream);
  received.catch(() => undefined);
  const { file, handle } = await openSpoolFile();
  // One unlink (fs.rm walks the path first); a file already gone is not an error.
  const dispose = () =>
    fs.unlink(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  let size = 0;
  const head: Buffer[] = [];
  let headLength = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  // Batches are written one after another, in order, on the thread pool.
  let written: Promise<void> = Promise.resolve();
  let unwritten = 0;
  const flush = () => {
    if (batch.length === 0) return;
    const buffers = batch;
    const bytes = batchBytes;
    batch = [];
    batchBytes = 0;
    unwritten += bytes;
    written = written.then(async () => {
      await handle.writev(buffers);
      unwritten -= bytes;
    });
    // Handled where it is awaited; this only keeps a failure from counting as unhandled
    // while the next chunks are read.
    written.catch(() => undefined);
  };
  try {
    stream.on('data', (chunk: Buffer) => {
      if (headLength < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headLength);
        head.push(part);
        headLength += part.length;
      }
      if (size < keep) {
        const kept = chunk.subarray(0, keep - size);
        batch.push(kept);
        batchBytes += kept.length;
        if (batchBytes >= WRITE_BATCH_BYTES) flush();
        if (unwritten >= MAX_UNWRITTEN_BYTES) {
          stream.pause();
          written.then(
            () => stream.resume(),
            (error: Error) => stream.destroy(error),
          );
        }
      }
      size += chunk.length;
    });
    await received;
    flush();
    await written;
  } catch (error) {
    await written.catch(() => undefined);
    await handle.close().catch(() => undefined);
    await dispose();
    throw error;
  }
  await handle.close();
  return { path: file, size, head: Buffer.concat(head), dispose };
}

/** The uploads spooled right now (each request's file lives only while it is served). */
export async function spooledUploads(): Promise<string[]> {
  return folder ? fs.readdir(await folder) : [];
}
