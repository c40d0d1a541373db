import { describe, expect, it } from 'vitest';
import { downloadFileName, formatFileSize, formatFixed, formatInteger, localizeDecimal } from '../../src/domain/format';

const LANGUAGES = ['ru', 'en'] as const;

/** How Intl writes a number with two decimals in the language: the reference for each case. */
const twoDecimals = (value: number, language: 'ru' | 'en') =>
  new Intl.NumberFormat(language, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value);

describe('formatFileSize', () => {
  // SPEC section 3: KB with 2 decimals, or MB once the size reaches 1024 KB.
  it.each([
    [0, '0.00 KB'],
    [1, '0.00 KB'],
    [512, '0.50 KB'],
    [1024, '1.00 KB'],
    [524288, '512.00 KB'],
    [805_171, '786.30 KB'],
    [1_024_000, '1,000.00 KB'],
    [1048575, '1,024.00 KB'],
    [1048576, '1.00 MB'],
    [1572864, '1.50 MB'],
    [12_624_855, '12.04 MB'],
    [10 * 1024 * 1024, '10.00 MB'],
    [5 * 1024 * 1024 * 1024, '5,120.00 MB'],
  ])('%d bytes in English -> %s', (bytes, expected) => {
    expect(formatFileSize(bytes, 'en')).toBe(expected);
  });

  // Issue #26 item 8: a decimal comma and Cyrillic units in Russian, not "786.30 KB" or "12.04 МБ".
  it.each([
    [0, '0,00 КБ'],
    [512, '0,50 КБ'],
    [805_171, '786,30 КБ'],
    [1_024_000, '1\u00a0000,00 КБ'],
    [1048576, '1,00 МБ'],
    [12_624_855, '12,04 МБ'],
    [5 * 1024 * 1024 * 1024, '5\u00a0120,00 МБ'],
  ])('%d bytes in Russian -> %s', (bytes, expected) => {
    expect(formatFileSize(bytes, 'ru')).toBe(expected);
  });

  it('writes the number part as Intl does in both languages', () => {
    for (const language of LANGUAGES) {
      for (const bytes of [0, 100, 805_171, 1_024_000, 1_048_576, 12_624_855, 987_654_321]) {
        const kb = bytes / 1024;
        const number = kb >= 1024 ? kb / 1024 : kb;
        expect(formatFileSize(bytes, language).split(' ')[0]).toBe(twoDecimals(number, language));
      }
    }
  });
});

describe('numbers in the interface languages', () => {
  it('groups whole numbers as Intl does: a no-break space in Russian, a comma in English', () => {
    for (const language of LANGUAGES) {
      const intl = new Intl.NumberFormat(language);
      for (const value of [0, 7, 999, 1000, 1750, 10000, 123456, 1234567, -1, -1500]) {
        expect(formatInteger(value, language)).toBe(intl.format(value));
      }
    }
    expect(formatInteger(1000, 'ru')).toBe('1\u00a0000');
  });

  it('writes an amount the API sends ("1750.00") with the language marks, as Intl does', () => {
    for (const language of LANGUAGES) {
      for (const value of [0, 0.7, 70, 1750, 7000, 1234567.5]) {
        expect(localizeDecimal(value.toFixed(2), language)).toBe(twoDecimals(value, language));
      }
    }
    expect(localizeDecimal('1750.00', 'ru')).toBe('1\u00a0750,00');
    expect(localizeDecimal('1750.00', 'en')).toBe('1,750.00');
    expect(localizeDecimal('0.7', 'ru')).toBe('0,7');
    expect(localizeDecimal('-12.5', 'ru')).toBe('-12,5');
    expect(localizeDecimal('not a number', 'ru')).toBe('not a number');
  });

  it('rounds to the decimals asked for', () => {
    expect(formatFixed(12.036, 2, 'ru')).toBe('12,04');
    expect(formatFixed(12.036, 2, 'en')).toBe('12.04');
  });
});

describe('downloadFileName', () => {
  it('is imagegen_{id}_{fileName}.jpg', () => {
    expect(downloadFileName(42, 'abc123.png')).toBe('imagegen_42_abc123.png.jpg');
    expect(downloadFileName('7', 'x')).toBe('imagegen_7_x.jpg');
  });
});
