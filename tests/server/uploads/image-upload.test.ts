import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeUpload, limiter, sniffImageType } from '../../../server/uploads/image-upload';
import { facePhoto } from '../portraits/support';

describe('decodeUpload', () => {
  it('turns the photo upright by its EXIF orientation and strips every piece of metadata', async () => {
    const rotated = await sharp(await facePhoto({ width: 800, height: 600 }))
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { Make: 'Spy camera' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '55/1 45/1 0/1' } })
      .jpeg()
      .toBuffer();
    expect((await sharp(rotated).metadata()).orientation).toBe(6);
    const decoded = await decodeUpload(rotated);
    expect([decoded.width, decoded.height]).toEqual([600, 800]);
    const meta = await sharp(decoded.bytes).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.exif).toBeUndefined();
    expect(meta.xmp).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    expect(decoded.bytes.includes(Buffer.from('Spy camera'))).toBe(false);
  });

  it('scales a large photo down to 2048 px on its long edge', async () => {
    const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#abc' } })
      .png()
      .toBuffer();
    const decoded = await decodeUpload(big);
    expect([decoded.width, decoded.height]).toEqual([2048, 1536]);
    expect(decoded.sourceType).toBe('image/png');
  });

  it('decides the type by the bytes', async () => {
    expect(sniffImageType(await facePhoto({ format: 'png' }))).toBe('image/png');
    expect(sniffImageType(await facePhoto({ format: 'webp' }))).toBe('image/webp');
    expect(sniffImageType(await facePhoto())).toBe('image/jpeg');
    expect(sniffImageType(Buffer.from('GIF89a'))).toBeUndefined();
    expect(sniffImageType(Buffer.from('<svg'))).toBeUndefined();
  });
});

describe('limiter (one decode per core at a time)', () => {
  it('runs at most its slots at once, in arrival order, and a failure frees its slot', async () => {
    const slot = limiter(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const task = (i: number, fail = false) =>
      slot(async () => {
        started.push(i);
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        if (fail) throw new Error(`task ${i}`);
        return i;
      });
    const results = await Promise.allSettled([task(0), task(1, true), task(2), task(3, true), task(4), task(5)]);
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    // Every slot came back: the next task starts at once.
    expect(await task(6)).toBe(6);
  });
});
