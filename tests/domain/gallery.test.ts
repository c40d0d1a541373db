import { describe, expect, it } from 'vitest';
import {
  filterByPrompt,
  GALLERY_MAX_PAGE,
  IMAGE_ID_MAX,
  imageIdParamsSchema,
  imageListQuerySchema,
  paginationWindow,
  regenerateSearch,
  type PageSlot,
} from '../../src/domain/gallery';
import { IMAGE_PAGE_MAX_LIMIT, IMAGE_SEARCH_MAX_LENGTH, type ImageRecord } from '../../src/domain/image-record';

/** Slots written the way the bar reads: numbers and "…". */
const show = (slots: PageSlot[]) => slots.map((s) => (s.kind === 'page' ? String(s.page) : '…')).join(' ');

describe('paginationWindow', () => {
  it.each([
    [1, 0, ''],
    [1, 1, ''],
    [1, 2, '1 2'],
    // SPEC: with 7 pages or fewer all are listed, whichever page is current.
    [1, 7, '1 2 3 4 5 6 7'],
    [4, 7, '1 2 3 4 5 6 7'],
    [7, 7, '1 2 3 4 5 6 7'],
    [1, 8, '1 2 … 8'],
    [2, 8, '1 2 3 … 8'],
    [3, 8, '1 2 3 4 … 8'],
    [4, 8, '1 2 3 4 5 … 8'],
    // A gap of one page shows the page instead.
    [5, 8, '1 … 4 5 6 7 8'],
    [5, 9, '1 … 4 5 6 … 9'],
    [6, 8, '1 … 5 6 7 8'],
    [7, 8, '1 … 6 7 8'],
    [8, 8, '1 … 7 8'],
    [50, 100, '1 … 49 50 51 … 100'],
    [1, 2084, '1 2 … 2084'],
    [2084, 2084, '1 … 2083 2084'],
    // Out of range pages are drawn as the nearest edge.
    [0, 10, '1 2 … 10'],
    [99, 10, '1 … 9 10'],
  ])('page %i of %i: %s', (current, total, expected) => {
    expect(show(paginationWindow(current, total))).toBe(expected);
  });

  it('never lists a page twice and keeps them in order', () => {
    for (let total = 0; total <= 30; total += 1) {
      for (let current = 1; current <= total; current += 1) {
        const pages = paginationWindow(current, total).flatMap((s) => (s.kind === 'page' ? [s.page] : []));
        expect(pages).toEqual([...new Set(pages)].sort((a, b) => a - b));
        if (total > 1) expect(pages).toContain(current);
      }
    }
  });
});

describe('imageListQuerySchema', () => {
  it.each([
    [{}, { page: 1, limit: 12, q: undefined }],
    [
      { page: '3', limit: '48' },
      { page: 3, limit: 48, q: undefined },
    ],
    [{ q: '  Fox ' }, { page: 1, limit: 12, q: 'Fox' }],
    [{ q: '   ' }, { page: 1, limit: 12, q: undefined }],
  ])('accepts %j', (query, expected) => {
    expect(imageListQuerySchema.parse(query)).toEqual(expected);
  });

  it.each(['0', '-1', '1.5', '0x10', '1e3', '+5', '00001', ' 1', '', '99999999999999999'])(
    'refuses page %j',
    (page) => {
      expect(imageListQuerySchema.safeParse({ page }).success).toBe(false);
    },
  );
});

describe('filterByPrompt', () => {
  const image = (prompt: string) => ({ prompt }) as ImageRecord;
  it('keeps the prompts containing the text, case-insensitively', () => {
    const list = [image('Red Fox'), image('blue whale'), image('ЁЖИК в тумане')];
    expect(filterByPrompt(list, 'fox').map((i) => i.prompt)).toEqual(['Red Fox']);
    expect(filterByPrompt(list, 'ёжик').map((i) => i.prompt)).toEqual(['ЁЖИК в тумане']);
    expect(filterByPrompt(list, '  ')).toHaveLength(3);
    expect(filterByPrompt(list, 'zebra')).toEqual([]);
  });
});

describe('paginationWindow slots', () => {
  it('marks the left-out pages as gaps, one before and one after the current page', () => {
    const page = (n: number) => ({ kind: 'page', page: n });
    expect(paginationWindow(50, 100)).toEqual([
      page(1),
      { kind: 'gap', key: 'start' },
      page(49),
      page(50),
      page(51),
      { kind: 'gap', key: 'end' },
      page(100),
    ]);
  });
});

describe('imageListQuerySchema limits and messages', () => {
  const messageOf = (query: unknown) => imageListQuerySchema.safeParse(query).error?.issues[0]?.message;

  it('takes a page up to GALLERY_MAX_PAGE and a limit up to IMAGE_PAGE_MAX_LIMIT, no more', () => {
    expect(imageListQuerySchema.parse({ page: String(GALLERY_MAX_PAGE) }).page).toBe(GALLERY_MAX_PAGE);
    expect(messageOf({ page: String(GALLERY_MAX_PAGE + 1) })).toMatch(/^page /);
    expect(imageListQuerySchema.parse({ limit: String(IMAGE_PAGE_MAX_LIMIT) }).limit).toBe(IMAGE_PAGE_MAX_LIMIT);
    expect(messageOf({ limit: String(IMAGE_PAGE_MAX_LIMIT + 1) })).toMatch(/^limit /);
  });

  it('names the parameter that is wrong, whatever is wrong with it', () => {
    for (const page of [3, null, '0', 'x']) expect(messageOf({ page })).toMatch(/^page /);
    for (const limit of [12, '0', '1.5']) expect(messageOf({ limit })).toMatch(/^limit /);
    for (const q of [['a'], 5, 'a\u0000b']) expect(messageOf({ q })).toMatch(/^q /);
  });

  it('takes a search as long as a prompt, counted in characters, and refuses a longer one', () => {
    const longest = '😀'.repeat(IMAGE_SEARCH_MAX_LENGTH);
    expect(imageListQuerySchema.parse({ q: longest }).q).toBe(longest);
    expect(messageOf({ q: `${longest}a` })).toMatch(/^q /);
    expect(imageListQuerySchema.parse({ q: 'red\tcat' }).q).toBe('red\tcat');
  });
});

describe('imageIdParamsSchema', () => {
  it('takes a plain whole number up to the largest id', () => {
    expect(imageIdParamsSchema.parse({ id: '12' })).toEqual({ id: 12 });
    expect(imageIdParamsSchema.parse({ id: String(IMAGE_ID_MAX) })).toEqual({ id: IMAGE_ID_MAX });
    for (const id of ['0', '012', '-1', '1e3', String(IMAGE_ID_MAX + 1), 12, undefined]) {
      expect(imageIdParamsSchema.safeParse({ id }).error?.issues[0]?.message).toMatch(/^id /);
    }
  });
});

/** docs/screens.md, the gallery: Regenerate with every parameter. */
describe('regenerateSearch', () => {
  const record = (overrides: Partial<ImageRecord>): ImageRecord =>
    ({
      prompt: 'a red cat',
      model: null,
      width: null,
      height: null,
      aspectRatio: null,
      stylePreset: null,
      negativePrompt: null,
      modelVariant: null,
      seed: null,
      ...overrides,
    }) as ImageRecord;

  it('carries every parameter of an original image, its size in pixels', () => {
    expect(
      regenerateSearch(
        record({ model: 'original', width: 832, height: 1216, stylePreset: 'anime', negativePrompt: 'blur', seed: 42 }),
      ),
    ).toEqual({
      prompt: 'a red cat',
      model: 'original',
      size: '832x1216',
      stylePreset: 'anime',
      negativePrompt: 'blur',
      seed: '42',
    });
  });

  it('carries the aspect ratio and variant of an sd3 image rather than its pixels', () => {
    expect(
      regenerateSearch(
        record({ model: 'sd3', width: 1536, height: 640, aspectRatio: '21:9', modelVariant: 'sd3.5-medium', seed: 0 }),
      ),
    ).toEqual({ prompt: 'a red cat', model: 'sd3', aspectRatio: '21:9', variant: 'sd3.5-medium', seed: '0' });
  });

  it('leaves out what the image was not made with', () => {
    expect(regenerateSearch(record({}))).toEqual({ prompt: 'a red cat' });
    expect(regenerateSearch(record({ width: 1024 }))).toEqual({ prompt: 'a red cat' });
    expect(regenerateSearch(record({ height: 1024 }))).toEqual({ prompt: 'a red cat' });
    expect(regenerateSearch(record({ stylePreset: '', negativePrompt: '', modelVariant: '' }))).toEqual({
      prompt: 'a red cat',
    });
  });
});
