import type { FormatterModule } from 'i18next';
import { formatInteger, localizeDecimal, type NumberLanguage } from '../domain/format';

const languageOf = (lng: string | undefined): NumberLanguage => (lng === 'en' ? 'en' : 'ru');

/**
 * How a value goes into a text (i18next runs every interpolation through it: alwaysFormat):
 * a whole number with the language's thousands separator, so "{{count}} токенов" reads
 * "1 000 токенов" as the purchase presets do; `{{value, decimal}}` writes a decimal that
 * came as text with a point ("12.04") in the language ("12,04"). Everything else as it came.
 * The same functions as src/i18n/format.ts, without Intl's first-use cost.
 */
export const interpolationFormatter: FormatterModule = {
  type: 'formatter',
  init() {},
  add() {},
  addCached() {},
  format(value: unknown, format: string | undefined, lng: string | undefined): string {
    const language = languageOf(lng);
    if (format === 'decimal' && (typeof value === 'string' || typeof value === 'number')) {
      return localizeDecimal(String(value), language);
    }
    if (typeof value === 'number' && Number.isSafeInteger(value)) return formatInteger(value, language);
    // Not a number: i18next writes it as it always does.
    return value as string;
  },
};
