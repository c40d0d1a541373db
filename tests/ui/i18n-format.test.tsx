import { beforeEach, describe, expect, it } from 'vitest';
import { initI18n } from '../../src/i18n';
import { formatDateAs, formatNumber } from '../../src/i18n/format';

const NOON = new Date(2026, 10, 25, 12, 5);

describe('numbers and dates in the page language', () => {
  beforeEach(async () => {
    await initI18n('ru', 'common');
  });

  it('writes numbers and dates as Russian does on a Russian page', () => {
    expect(formatNumber(100000)).toBe('100\u00a0000');
    expect(formatDateAs(NOON, 'longDate')).toBe('25 ноября 2026 г.');
    expect(formatDateAs(NOON, 'shortDate')).toBe('25.11.2026');
    expect(formatDateAs(NOON, 'dateTime')).toBe('25 нояб. 2026 г., 12:05');
  });

  it('follows the language the page is initialised in, not the first one it formatted in', async () => {
    expect(formatNumber(1500)).toBe('1\u00a0500');
    await initI18n('en', 'common');
    expect(formatNumber(1500)).toBe('1,500');
    expect(formatDateAs(NOON, 'longDate')).toBe('November 25, 2026');
    expect(formatDateAs(NOON, 'shortDate')).toBe('11/25/2026');
  });

  it('groups whole numbers exactly as Intl does in both languages', () => {
    const values = [0, 7, 999, 1000, 1500, 9999, 10000, 12345, 100000, 999999, 1234567, 2147483647, -1, -1500, -12345];
    for (const language of ['ru', 'en'] as const) {
      const intl = new Intl.NumberFormat(language);
      for (const value of values) expect(formatNumber(value, language)).toBe(intl.format(value));
    }
    expect(formatNumber(1234.5, 'en')).toBe('1,234.5');
    expect(formatNumber(1234.5, 'ru')).toBe('1\u00a0234,5');
  });

  it('writes every month, hour and style exactly as Intl does in both languages (the kind of space aside)', () => {
    const spaces = (text: string) => text.replace(/[\u202f\u00a0]/g, ' ');
    const styles = {
      longDate: { day: 'numeric', month: 'long', year: 'numeric' },
      dateTime: { dateStyle: 'medium', timeStyle: 'short' },
      shortDate: {},
    } as const;
    for (const language of ['ru', 'en'] as const) {
      for (const [style, options] of Object.entries(styles)) {
        const intl = new Intl.DateTimeFormat(language, options);
        for (let month = 0; month < 12; month += 1) {
          for (const [day, hour, minute] of [
            [1, 0, 0],
            [9, 9, 7],
            [25, 12, 30],
            [31, 23, 59],
          ] as const) {
            const date = new Date(2026, month, day, hour, minute);
            expect(spaces(formatDateAs(date, style as keyof typeof styles, language))).toBe(spaces(intl.format(date)));
          }
        }
      }
    }
  });

  it('writes an invalid date as toLocaleString does', () => {
    expect(formatDateAs(new Date('not a date'), 'dateTime')).toBe(new Date('not a date').toLocaleString('ru'));
  });

  it('takes an explicit language', () => {
    expect(formatNumber(2500, 'en')).toBe('2,500');
    expect(formatNumber(2500, 'ru')).toBe('2\u00a0500');
  });
});
