import { describe, expect, it } from 'vitest';
import { filterByPrompt, imageListQuerySchema, paginationWindow, type PageSlot } from '../../src/domain/gallery';
import type { ImageRecord } from '../../src/domain/image-record';

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
