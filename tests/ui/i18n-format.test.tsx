import { beforeEach, describe, expect, it } from 'vitest';
import { LEDGER_KINDS, type LedgerEntry } from '../../src/domain/billing';
import { i18next, initI18n } from '../../src/i18n';
import { formatDateAs, formatFileSize, formatNumber } from '../../src/i18n/format';
import { ledgerDescription, money, tokenRate } from '../../src/ui/billing/texts';

const NOON = new Date(2026, 10, 25, 12, 5);
const NBSP = '\u00a0';

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

/**
 * Issue #26 item 8: one way of writing numbers on every screen. A number inside a text
 * ("Покупка 1000 токенов") reads as the purchase presets write it (1 000); an amount as
 * 1 750,00 ₽, not 1750,00 ₽; a size with a decimal comma and Russian units.
 */
describe('numbers inside texts', () => {
  it('groups thousands in every interpolated whole number, as the language does', async () => {
    await initI18n('ru', 'all');
    expect(i18next.t('billing:ledger.kinds.purchase', { count: 1000 })).toBe(`Покупка 1${NBSP}000 токенов`);
    expect(i18next.t('billing:plans.features.monthlyTokens', { count: 2500 })).toBe(`2${NBSP}500 токенов ежемесячно`);
    expect(i18next.t('header.tokens', { count: 12345 })).toBe(`12${NBSP}345 токенов`);
    await initI18n('en', 'all');
    expect(i18next.t('billing:ledger.kinds.purchase', { count: 1000 })).toBe('Purchase of 1,000 tokens');
    expect(i18next.t('header.tokens', { count: 12345 })).toBe('12,345 tokens');
  });

  it('writes amounts with the thousands separator and the decimal mark of the language', async () => {
    await initI18n('ru', 'all');
    expect(money('1750.00', 'RUB')).toBe(`1${NBSP}750,00 ₽`);
    expect(tokenRate()).toBe('0,7');
    await initI18n('en', 'all');
    expect(money('1750.00', 'RUB')).toBe('1,750.00 ₽');
  });

  it('writes file sizes with a decimal comma and КБ/МБ in Russian, KB/MB in English', async () => {
    await initI18n('ru', 'all');
    expect(formatFileSize(805_171)).toBe('786,30 КБ');
    expect(formatFileSize(12_624_855)).toBe('12,04 МБ');
    expect(i18next.t('portrait:errors.UPLOAD_TOO_LARGE', { sizeMb: '12.04' })).toBe(
      'Размер файла должен быть меньше 10 МБ. Текущий размер: 12,04 МБ',
    );
    await initI18n('en', 'all');
    expect(formatFileSize(805_171)).toBe('786.30 KB');
    // SPEC section 5's text, word for word.
    expect(i18next.t('portrait:errors.UPLOAD_TOO_LARGE', { sizeMb: '12.04' })).toBe(
      'File size must be less than 10MB. Current size: 12.04 MB',
    );
  });
});

/** Issue #26 item 8 and #27 item 3: the spend history names models, in the page's language. */
describe('the spend history in words', () => {
  const entry = (kind: LedgerEntry['kind'], params: LedgerEntry['params'], delta = -2): LedgerEntry => ({
    id: 1,
    createdAt: '2026-11-24T12:30:00.000Z',
    delta,
    balanceAfter: 48,
    kind,
    params,
  });

  it('shows an image model by its name, not its id', async () => {
    await initI18n('ru', 'all');
    expect(ledgerDescription(entry('image', { model: 'original' }))).toBe('Генерация изображения (Original SD XL)');
    expect(ledgerDescription(entry('image', { model: 'ultra' }))).toBe('Генерация изображения (Премиум-модель)');
    expect(ledgerDescription(entry('refund', { model: 'core' }, 6))).toBe('Возврат за неудавшуюся генерацию (FLUX.1)');
    await initI18n('en', 'all');
    expect(ledgerDescription(entry('image', { model: 'original' }))).toBe('Image generation (Original SD XL)');
    expect(ledgerDescription(entry('refund', { model: 'portrait' }, 12))).toBe('Refund for a failed portrait');
  });

  it('words every code in both languages, and a chat reservation apart from its returned part', async () => {
    for (const language of ['ru', 'en'] as const) {
      await initI18n(language, 'all');
      const chat = ledgerDescription(entry('chat', { model: 'gpt-4o', tokens: 1500 }));
      const release = ledgerDescription(entry('chat_release', { model: 'gpt-4o', tokens: 1500 }, 1));
      expect(chat).toContain(language === 'ru' ? `1${NBSP}500` : '1,500');
      expect(release).not.toBe(chat);
      for (const kind of LEDGER_KINDS) {
        const text = ledgerDescription(entry(kind, {}));
        expect(text, kind).not.toBe('');
        expect(text, kind).not.toContain('billing:');
      }
    }
  });
});
