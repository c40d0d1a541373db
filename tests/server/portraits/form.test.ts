import { describe, expect, it } from 'vitest';
import { parseForm, parseReference, type PortraitForm } from '../../../server/portraits/service';
import type { SpooledFile } from '../../../server/uploads/spool';

/**
 * The portrait form's rules as pure functions (server/portraits/service.ts): SPEC section 5's
 * checks in its order, and docs/architecture.md "Portraits": `user_image` is the id, the file
 * name or the `/images/…` address of one of the user's own images, never another URL. The
 * route tests (portraits.test.ts) drive the same rules over HTTP with the ledger; these pin
 * each rule's edges without a server.
 */

const APP_URL = 'https://app.example';
const NAME = `${'0123456789abcdef'.repeat(2)}.png`;
const PROMPT = 'A portrait in a vintage film style';

function upload(size: number, fileName = 'me.jpg'): NonNullable<PortraitForm['file']> {
  const file: SpooledFile = { path: '/nowhere', size, head: Buffer.alloc(0), dispose: async () => undefined };
  return { ...file, fileName };
}

/** The refusal parseForm throws, as the fields a reply carries. */
function refusal(form: PortraitForm): { code: string; message: string; details?: unknown } {
  try {
    parseForm(form, APP_URL);
  } catch (error) {
    const { code, message, details } = error as { code: string; message: string; details?: unknown };
    return { code, message, ...(details === undefined ? {} : { details }) };
  }
  throw new Error('the form was accepted');
}

describe('parseReference: one of the user’s own images, never another address', () => {
  it.each([
    ['1', { id: 1 }],
    ['42', { id: 42 }],
    ['  42 ', { id: 42 }],
    // The largest id a PostgreSQL integer holds.
    ['2147483647', { id: 2147483647 }],
    [NAME, { fileName: NAME }],
    [` ${NAME}\n`, { fileName: NAME }],
    [`${APP_URL}/images/${NAME}`, { fileName: NAME }],
    [`${APP_URL}:443/images/${NAME}`, { fileName: NAME }],
  ])('takes %j', (value, expected) => {
    expect(parseReference(value, APP_URL)).toEqual(expected);
  });

  it.each([
    '',
    '0',
    '042',
    '-1',
    '1.5',
    '12abc',
    'abc12',
    '2147483648',
    '99999999999',
    `${NAME}.png`,
    `x${NAME}`,
    `${'0123456789ABCDEF'.repeat(2)}.png`,
    `${APP_URL}/images/${NAME}?size=big`,
    `${APP_URL}/images/${NAME}/more`,
    `${APP_URL}/api/images/${NAME}`,
    `${APP_URL}/x/images/${NAME}`,
    `${APP_URL}/images/`,
    `${APP_URL}/images/not-a-name.png`,
    `http://app.example/images/${NAME}`,
    `https://app.example:8443/images/${NAME}`,
    `https://evil.example/images/${NAME}`,
    `https://app.example.evil.example/images/${NAME}`,
    `file:///images/${NAME}`,
    'not a url at all',
  ])('refuses %j', (value) => {
    expect(() => parseReference(value, APP_URL)).toThrow(
      expect.objectContaining({
        code: 'PHOTO_REFERENCE_INVALID',
        message: 'The photo must be one of your own images',
      }),
    );
  });
});

describe('parseForm: SPEC section 5 in its order', () => {
  it('takes an upload with the screen’s output format (webp) and no style when the form sends neither', () => {
    const file = upload(1000);
    const request = parseForm({ fields: { prompt: PROMPT }, file }, APP_URL);
    expect(request).toMatchObject({ photo: { kind: 'upload', file }, prompt: PROMPT, outputFormat: 'webp' });
    expect(request.stylePreset).toBeUndefined();
  });

  it('treats the empty file part a browser sends for an empty file input as no photo', () => {
    expect(refusal({ fields: { prompt: PROMPT }, file: upload(0, '') })).toEqual({
      code: 'PHOTO_REQUIRED',
      message: 'Please upload a photo first',
    });
    // With a reference beside it, the reference is the photo.
    expect(parseForm({ fields: { prompt: PROMPT, user_image: '7' }, file: upload(0, '') }, APP_URL).photo).toEqual({
      kind: 'reference',
      ref: { id: 7 },
    });
  });

  it('keeps a named empty file and an unnamed non-empty one as uploads, for the byte checks to refuse', () => {
    expect(parseForm({ fields: { prompt: PROMPT }, file: upload(0, 'empty.jpg') }, APP_URL).photo.kind).toBe('upload');
    expect(parseForm({ fields: { prompt: PROMPT }, file: upload(10, '') }, APP_URL).photo.kind).toBe('upload');
  });

  it('prefers the upload to a reference sent beside it', () => {
    const file = upload(1000);
    expect(parseForm({ fields: { prompt: PROMPT, user_image: '7' }, file }, APP_URL).photo).toEqual({
      kind: 'upload',
      file,
    });
  });

  it('takes a prompt of exactly 2000 characters and refuses 2001, naming the field and the limit', () => {
    const file = upload(1000);
    expect(parseForm({ fields: { prompt: 'x'.repeat(2000) }, file }, APP_URL).prompt).toHaveLength(2000);
    expect(refusal({ fields: { prompt: 'x'.repeat(2001) }, file })).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Prompt must be less than 2000 characters',
      details: { field: 'prompt', max: 2000, length: 2001 },
    });
  });

  it('refuses control characters in the prompt, naming the field', () => {
    expect(refusal({ fields: { prompt: 'a face\u0000' }, file: upload(1000) })).toEqual({
      code: 'INVALID_TEXT',
      message: 'Text contains characters that are not allowed',
      details: { field: 'prompt' },
    });
  });

  it('names the field of each refused option, so the form can mark it', () => {
    const file = upload(1000);
    expect(refusal({ fields: { prompt: PROMPT, aspect_ratio: '21:9' }, file })).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'aspect_ratio' },
    });
    expect(refusal({ fields: { prompt: PROMPT, output_format: 'gif' }, file })).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'output_format' },
    });
    expect(refusal({ fields: { prompt: PROMPT, style_preset: 'watercolour' }, file })).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'style_preset' },
    });
  });

  it("takes 'none' as no style and keeps a real one (the portrait screen sends photographic)", () => {
    const file = upload(1000);
    expect(parseForm({ fields: { prompt: PROMPT, style_preset: 'none' }, file }, APP_URL).stylePreset).toBeUndefined();
    expect(parseForm({ fields: { prompt: PROMPT, style_preset: 'photographic' }, file }, APP_URL).stylePreset).toBe(
      'photographic',
    );
  });
});

describe('parseForm: the contract’s form, nothing else (issue #42)', () => {
  it('refuses a field the form does not have, naming it', () => {
    expect(refusal({ fields: { prompt: PROMPT, colour: 'red' }, file: upload(1000) })).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'colour' },
    });
  });

  it('reports SPEC’s first broken rule whatever else is wrong with the form', () => {
    const everythingElse = { aspect_ratio: '21:9', output_format: 'gif', style_preset: 'watercolour', colour: 'red' };
    // No photo comes first, even beside a prompt that is refused outright.
    expect(refusal({ fields: { prompt: 'a face\u0000', ...everythingElse } })).toEqual({
      code: 'PHOTO_REQUIRED',
      message: 'Please upload a photo first',
    });
    expect(refusal({ fields: { prompt: 'x'.repeat(2001), ...everythingElse } }).code).toBe('PHOTO_REQUIRED');
    expect(refusal({ fields: { prompt: ' ', ...everythingElse }, file: upload(1000) })).toEqual({
      code: 'PROMPT_REQUIRED',
      message: 'Please enter a prompt',
    });
    expect(refusal({ fields: { ...everythingElse }, file: upload(1000) }).code).toBe('PROMPT_REQUIRED');
  });
});
