// One file: the portrait endpoint on one app: SPEC section 5's refusals and the paid path share its
// fixtures.
import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOfflineRender } from '../../../server/providers/images/offline';
import { spooledUploads } from '../../../server/uploads/spool';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import {
  balance,
  expectLedgerConsistent,
  expectStorageMatchesRows,
  getJson,
  imagesOf,
  requestsOf,
  signedInUser,
  spend,
  type TestUser,
} from '../images/support';
import { facePhoto, postPortrait } from './support';

const PROMPT = 'A portrait in a vintage film style, golden hour light';

/** A PNG whose header says 30000x30000: a decompression bomb of a few kilobytes. */
function pngBomb(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (bytes: Buffer) => {
    let crc = 0xffffffff;
    for (const byte of bytes) crc = (crcTable[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(30000, 0);
  header.writeUInt32BE(30000, 4);
  header[8] = 8;
  header[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(30001 * 64))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe.each(testDatabases())('portraits on $name (offline engine)', (kind) => {
  let app: TestApp;
  let logins = 0;
  let photo: Buffer;

  beforeAll(async () => {
    app = await startTestApp(kind);
    photo = await facePhoto();
  });
  afterAll(async () => {
    await app.close();
  });

  const newUser = () => signedInUser(app, `portrait-${kind.name}-${(logins += 1)}@example.com`);
  /** A new user who has spent the signup bonus down to `left` tokens (a ledger charge). */
  const userWith = async (left: number) => {
    const user = await newUser();
    await spend(app, user, (await balance(app, user)) - left);
    return user;
  };

  it('makes a portrait from an upload, charges 12 and lists it in my-images', async () => {
    const user = await newUser();
    const { status, body } = await postPortrait(app, user, {
      fields: { prompt: PROMPT, aspect_ratio: '4:5', style_preset: 'photographic', output_format: 'webp' },
      files: [{ bytes: photo, name: 'me.jpg' }],
    });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      success: true,
      tokens: { charged: 12 },
      balanceAfter: 38,
      message: 'Portrait generated successfully',
    });
    const data = body.data as { id: number; url: string; prompt: string };
    expect(Object.keys(data).sort()).toEqual(['id', 'prompt', 'url']);
    expect(data.prompt).toBe(PROMPT);
    expect(data.url).toMatch(new RegExp(`^${app.url}/images/[0-9a-f]{32}\\.webp$`));
    expect(await balance(app, user)).toBe(38);

    const file = await fetch(data.url);
    expect(file.headers.get('content-type')).toBe('image/webp');
    const bytes = Buffer.from(await file.arrayBuffer());
    const meta = await sharp(bytes).metadata();
    expect([meta.width, meta.height]).toEqual([896, 1088]);
    expect(await isOfflineRender(bytes)).toBe(true);

    const list = await getJson(app, user, '/api/images/my-images');
    const images = (list.body.data as { images: Array<Record<string, unknown>> }).images;
    expect(images[0]).toMatchObject({
      id: data.id,
      prompt: PROMPT,
      model: 'Portrait generation',
      finish_reason: 'success',
      mimeType: 'image/webp',
      size: '896x1088',
      stylePreset: 'photographic',
    });
    const [request] = await requestsOf(app, user);
    expect(request).toMatchObject({ model: 'portrait', status: 'COMPLETED', cost: 12 });
    await expectLedgerConsistent(app, user);
    await expectStorageMatchesRows(app);
    // The uploaded photo was spooled to a temporary file, gone with the request.
    expect(await spooledUploads()).toEqual([]);
  });

  it('applies the EXIF orientation and strips metadata before the engine sees the photo', async () => {
    const user = await newUser();
    // A landscape photo whose EXIF says "rotate 90°": upright it is portrait-shaped.
    const rotated = await sharp(await facePhoto({ width: 800, height: 600 }))
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { Make: 'Spy camera', Model: 'GPS tracker' } })
      .jpeg()
      .toBuffer();
    const { status, body } = await postPortrait(app, user, {
      fields: { prompt: PROMPT, output_format: 'png' },
      files: [{ bytes: rotated, name: 'rotated.jpg' }],
    });
    expect(status, JSON.stringify(body)).toBe(200);
    const bytes = Buffer.from(await (await fetch((body.data as { url: string }).url)).arrayBuffer());
    const meta = await sharp(bytes).metadata();
    expect(meta.format).toBe('png');
    expect(meta.exif?.toString('latin1') ?? '').not.toContain('Spy camera');
    expect(meta.orientation ?? 1).toBe(1);
  });

  it('takes one of the user own images as the photo (user_image), by id or address', async () => {
    const user = await newUser();
    const first = await postPortrait(app, user, {
      fields: { prompt: PROMPT },
      files: [{ bytes: photo, name: 'me.jpg' }],
    });
    const data = first.body.data as { id: number; url: string };
    const byId = await postPortrait(app, user, { fields: { prompt: 'Again', user_image: String(data.id) } });
    expect(byId.status, JSON.stringify(byId.body)).toBe(200);
    const byUrl = await postPortrait(app, user, { fields: { prompt: 'Once more', user_image: data.url } });
    expect(byUrl.status, JSON.stringify(byUrl.body)).toBe(200);
    expect(await balance(app, user)).toBe(50 - 36);

    // Someone else's image, an outside address, our address with a path trick: refused, free.
    const stranger = await newUser();
    for (const reference of [
      String(data.id),
      data.url,
      'https://example.com/face.jpg',
      'http://127.0.0.1:1/images/x.jpg',
      `${app.url}/images/../../etc/passwd`,
      'file:///etc/passwd',
    ]) {
      const refused = await postPortrait(app, stranger, { fields: { prompt: PROMPT, user_image: reference } });
      expect(refused.status, reference).toBe(400);
      expect(refused.body).toMatchObject({
        code: 'PHOTO_REFERENCE_INVALID',
        message: 'The photo must be one of your own images',
      });
    }
    expect(await balance(app, stranger)).toBe(50);
    expect(await requestsOf(app, stranger)).toEqual([]);
  });

  it('checks in SPEC order: photo, prompt, balance', async () => {
    const user = await newUser();
    let result = await postPortrait(app, user, { fields: { prompt: '' } });
    expect(result).toMatchObject({
      status: 400,
      body: { code: 'PHOTO_REQUIRED', message: 'Please upload a photo first' },
    });
    result = await postPortrait(app, user, { fields: { prompt: '   ' }, files: [{ bytes: photo, name: 'a.jpg' }] });
    expect(result).toMatchObject({ status: 400, body: { code: 'PROMPT_REQUIRED', message: 'Please enter a prompt' } });
    result = await postPortrait(app, user, { fields: {}, files: [{ bytes: photo, name: 'a.jpg' }] });
    expect(result.body.code).toBe('PROMPT_REQUIRED');
    result = await postPortrait(app, user, {
      fields: { prompt: 'x'.repeat(2001) },
      files: [{ bytes: photo, name: 'a.jpg' }],
    });
    expect(result).toMatchObject({
      status: 400,
      body: { message: 'Prompt must be less than 2000 characters', details: { max: 2000 } },
    });
    // Four portraits take 48 of 50 tokens; the fifth is refused with SPEC's text.
    for (let i = 0; i < 4; i += 1) {
      result = await postPortrait(app, user, { fields: { prompt: PROMPT }, files: [{ bytes: photo, name: 'a.jpg' }] });
      expect(result.status).toBe(200);
    }
    result = await postPortrait(app, user, { fields: { prompt: PROMPT }, files: [{ bytes: photo, name: 'a.jpg' }] });
    expect(result).toMatchObject({
      status: 402,
      body: {
        code: 'INSUFFICIENT_TOKENS',
        message: 'Insufficient tokens. You need 12 tokens for portrait generation.',
        details: { balance: 2, cost: 12 },
      },
    });
    expect(await balance(app, user)).toBe(2);
    expect((await requestsOf(app, user)).length).toBe(4);
    await expectLedgerConsistent(app, user);
  });

  it('makes a portrait with exactly 12 tokens left, down to 0', async () => {
    const user = await userWith(12);
    const result = await postPortrait(app, user, {
      fields: { prompt: PROMPT },
      files: [{ bytes: photo, name: 'a.jpg' }],
    });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body).toMatchObject({ tokens: { charged: 12 }, balanceAfter: 0 });
    expect(await balance(app, user)).toBe(0);
    await expectLedgerConsistent(app, user);
  });

  it('checks the photo before the balance: a user who cannot pay still hears what is wrong with the file', async () => {
    const user = await userWith(5);
    const text = await postPortrait(app, user, {
      fields: { prompt: PROMPT },
      files: [{ bytes: Buffer.from('not a picture at all\n'.repeat(50)), name: 'face.jpg', type: 'image/jpeg' }],
    });
    expect(text).toMatchObject({ status: 415, body: { code: 'UPLOAD_UNSUPPORTED_TYPE' } });
    const big = Buffer.alloc(11 * 1024 * 1024);
    photo.copy(big);
    const tooBig = await postPortrait(app, user, {
      fields: { prompt: PROMPT },
      files: [{ bytes: big, name: 'b.jpg' }],
    });
    expect(tooBig).toMatchObject({ status: 413, body: { code: 'UPLOAD_TOO_LARGE' } });
    // A photo that is fine meets the balance check.
    const fine = await postPortrait(app, user, {
      fields: { prompt: PROMPT },
      files: [{ bytes: photo, name: 'a.jpg' }],
    });
    expect(fine).toMatchObject({
      status: 402,
      body: { code: 'INSUFFICIENT_TOKENS', details: { balance: 5, cost: 12 } },
    });
    expect(await balance(app, user)).toBe(5);
    expect(await requestsOf(app, user)).toEqual([]);
  });

  it('refuses, free, a reference to an own image whose file is gone from the store', async () => {
    const user = await newUser();
    const first = await postPortrait(app, user, {
      fields: { prompt: PROMPT },
      files: [{ bytes: photo, name: 'me.jpg' }],
    });
    expect(first.status).toBe(200);
    const [image] = await imagesOf(app, user);
    await app.services.thumbnails.drain();
    await fs.rm(path.join(app.config.imagesDir, image!.fileName));
    const refused = await postPortrait(app, user, { fields: { prompt: PROMPT, user_image: String(image!.id) } });
    expect(refused).toMatchObject({
      status: 400,
      body: { code: 'PHOTO_REFERENCE_INVALID', message: 'The photo must be one of your own images' },
    });
    expect(await balance(app, user)).toBe(50 - 12);
    expect(await requestsOf(app, user)).toHaveLength(1);
    // The store and the rows agree again for the tests after this one.
    await app.services.images.deleteImage(user.id, image!.id);
  });

  describe('refuses every bad input with a clear 4xx, charging and storing nothing', () => {
    let user: TestUser;
    beforeAll(async () => {
      user = await newUser();
    });

    const cases: Array<{
      name: string;
      post: () => Promise<Parameters<typeof postPortrait>[2]>;
      status: number;
      code: string;
      message?: string | RegExp;
    }> = [
      { name: 'no photo', post: async () => ({ fields: { prompt: PROMPT } }), status: 400, code: 'PHOTO_REQUIRED' },
      {
        name: 'a blank prompt',
        post: async () => ({ fields: { prompt: ' \n ' }, files: [{ bytes: photo, name: 'a.jpg' }] }),
        status: 400,
        code: 'PROMPT_REQUIRED',
      },
      {
        name: 'a 2001-character prompt',
        post: async () => ({ fields: { prompt: 'y'.repeat(2001) }, files: [{ bytes: photo, name: 'a.jpg' }] }),
        status: 400,
        code: 'VALIDATION_ERROR',
        message: 'Prompt must be less than 2000 characters',
      },
      {
        name: 'an 11 MB file',
        post: async () => {
          const big = Buffer.alloc(11 * 1024 * 1024);
          photo.copy(big);
          return { fields: { prompt: PROMPT }, files: [{ bytes: big, name: 'big.jpg' }] };
        },
        status: 413,
        code: 'UPLOAD_TOO_LARGE',
        message: 'File size must be less than 10MB. Current size: 11.00 MB',
      },
      {
        name: 'a text file named .jpg',
        post: async () => ({
          fields: { prompt: PROMPT },
          files: [{ bytes: Buffer.from('not a picture at all\n'.repeat(50)), name: 'face.jpg', type: 'image/jpeg' }],
        }),
        status: 415,
        code: 'UPLOAD_UNSUPPORTED_TYPE',
        message: 'Only JPG, PNG, and WebP formats are supported',
      },
      {
        name: 'an SVG',
        post: async () => ({
          fields: { prompt: PROMPT },
          files: [
            {
              bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512"><rect/></svg>'),
              name: 'face.png',
              type: 'image/png',
            },
          ],
        }),
        status: 415,
        code: 'UPLOAD_UNSUPPORTED_TYPE',
      },
      {
        name: 'a GIF',
        post: async () => ({
          fields: { prompt: PROMPT },
          files: [
            {
              bytes: await sharp({ create: { width: 400, height: 400, channels: 3, background: '#c33' } })
                .gif()
                .toBuffer(),
              name: 'face.webp',
              type: 'image/webp',
            },
          ],
        }),
        status: 415,
        code: 'UPLOAD_UNSUPPORTED_TYPE',
      },
      {
        name: 'a 30000x30000 PNG',
        post: async () => ({
          fields: { prompt: PROMPT },
          files: [{ bytes: pngBomb(), name: 'bomb.png', type: 'image/png' }],
        }),
        status: 413,
        code: 'UPLOAD_TOO_MANY_PIXELS',
      },
      {
        name: 'a truncated JPEG',
        post: async () => ({
          fields: { prompt: PROMPT },
          files: [{ bytes: photo.subarray(0, Math.floor(photo.length * 0.6)), name: 'cut.jpg' }],
        }),
        status: 400,
        code: 'UPLOAD_UNREADABLE',
      },
      {
        name: 'a zero-byte file',
        post: async () => ({ fields: { prompt: PROMPT }, files: [{ bytes: Buffer.alloc(0), name: 'empty.jpg' }] }),
        status: 400,
        code: 'UPLOAD_UNREADABLE',
      },
      {
        name: 'an animated WebP',
        post: async () => {
          const frame = (colour: string) =>
            sharp({ create: { width: 320, height: 320, channels: 3, background: colour } })
              .png()
              .toBuffer();
          const animated = await sharp([await frame('#f00'), await frame('#00f')], { join: { animated: true } })
            .webp()
            .toBuffer();
          return { fields: { prompt: PROMPT }, files: [{ bytes: animated, name: 'anim.webp', type: 'image/webp' }] };
        },
        status: 400,
        code: 'UPLOAD_ANIMATED',
      },
      {
        name: 'a photo too small to hold a face',
        post: async () => ({
          fields: { prompt: PROMPT },
          files: [{ bytes: await facePhoto({ width: 200, height: 240 }), name: 'tiny.jpg' }],
        }),
        status: 422,
        code: 'UPLOAD_TOO_SMALL',
      },
      {
        name: 'several files',
        post: async () => ({
          fields: { prompt: PROMPT },
          files: [
            { bytes: photo, name: 'a.jpg' },
            { bytes: photo, name: 'b.jpg' },
          ],
        }),
        status: 400,
        code: 'UPLOAD_TOO_MANY_FILES',
      },
      {
        name: 'an unknown aspect ratio',
        post: async () => ({
          fields: { prompt: PROMPT, aspect_ratio: '21:9' },
          files: [{ bytes: photo, name: 'a.jpg' }],
        }),
        status: 400,
        code: 'VALIDATION_ERROR',
        message: /^Aspect ratio must be one of 1:1, 16:9, 2:3, 3:2, 4:5, 5:4$/,
      },
      {
        name: 'an unknown output format',
        post: async () => ({
          fields: { prompt: PROMPT, output_format: 'gif' },
          files: [{ bytes: photo, name: 'a.jpg' }],
        }),
        status: 400,
        code: 'VALIDATION_ERROR',
        message: /^Output format must be one of/,
      },
      {
        name: 'an unknown style preset',
        post: async () => ({
          fields: { prompt: PROMPT, style_preset: 'watercolour' },
          files: [{ bytes: photo, name: 'a.jpg' }],
        }),
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        name: 'an outside URL as user_image',
        post: async () => ({ fields: { prompt: PROMPT, user_image: 'http://169.254.169.254/latest/meta-data' } }),
        status: 400,
        code: 'PHOTO_REFERENCE_INVALID',
      },
      {
        name: 'no Origin',
        post: async () => ({ fields: { prompt: PROMPT }, files: [{ bytes: photo, name: 'a.jpg' }], origin: null }),
        status: 403,
        code: 'ORIGIN_REQUIRED',
      },
      {
        name: 'another site as Origin',
        post: async () => ({
          fields: { prompt: PROMPT },
          files: [{ bytes: photo, name: 'a.jpg' }],
          origin: 'https://evil.example',
        }),
        status: 403,
        code: 'CROSS_SITE_REQUEST',
      },
    ];

    it.each(cases)('$name', async ({ post, status, code, message }) => {
      const result = await postPortrait(app, user, await post());
      expect(result.status, JSON.stringify(result.body)).toBe(status);
      expect(result.body).toMatchObject({ success: false, code });
      if (typeof message === 'string') expect(result.body.message).toBe(message);
      else if (message) expect(result.body.message).toMatch(message);
      expect(await balance(app, user)).toBe(50);
      expect(await requestsOf(app, user)).toEqual([]);
      expect(await imagesOf(app, user)).toEqual([]);
      await expectStorageMatchesRows(app);
      // The upload's temporary file went with the request.
      expect(await spooledUploads()).toEqual([]);
      // The server is still healthy.
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    });

    it('refuses a field the contract does not name, naming it, and only after SPEC’s own rules', async () => {
      const photoPart = [{ bytes: photo, name: 'a.jpg' }];
      // Issue #42: a request that does not match its contract is refused, not quietly trimmed.
      const refused = await postPortrait(app, user, { fields: { prompt: PROMPT, colour: 'red' }, files: photoPart });
      expect(refused).toMatchObject({
        status: 400,
        body: { success: false, code: 'VALIDATION_ERROR', details: { field: 'colour' } },
      });
      // SPEC section 5's rules come first: the photo, then the prompt.
      const noPhoto = await postPortrait(app, user, {
        fields: { prompt: 'a face\u0000', aspect_ratio: '21:9', colour: 'x' },
      });
      expect(noPhoto).toMatchObject({
        status: 400,
        body: { code: 'PHOTO_REQUIRED', message: 'Please upload a photo first' },
      });
      const noPrompt = await postPortrait(app, user, { fields: { prompt: ' ', colour: 'x' }, files: photoPart });
      expect(noPrompt).toMatchObject({
        status: 400,
        body: { code: 'PROMPT_REQUIRED', message: 'Please enter a prompt' },
      });
      expect(await balance(app, user)).toBe(50);
      expect(await requestsOf(app, user)).toEqual([]);
      expect(await spooledUploads()).toEqual([]);
    });

    it('refuses a JSON body and a visitor who is not signed in', async () => {
      const json = await fetch(`${app.url}/api/face-swap/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: app.url, cookie: user.jar.header() },
        body: JSON.stringify({ prompt: PROMPT, user_image: '1' }),
      });
      expect(json.status).toBe(400);
      const anonymous = await postPortrait(app, undefined, {
        fields: { prompt: PROMPT },
        files: [{ bytes: photo, name: 'a.jpg' }],
      });
      expect(anonymous.status).toBe(401);
      expect(await balance(app, user)).toBe(50);
    });
  });
});
