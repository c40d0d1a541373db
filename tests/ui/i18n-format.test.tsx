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

  it('takes an explicit language', () => {
    expect(formatNumber(2500, 'en')).toBe('2,500');
    expect(formatNumber(2500, 'ru')).toBe('2\u00a0500');
  });
});
