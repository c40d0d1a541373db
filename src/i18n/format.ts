import { formatFileSize as fileSizeIn, formatInteger, localizeDecimal } from '../domain/format';
import { DEFAULT_LANGUAGE, i18next, languages, type Language } from './index';

/**
 * Numbers and dates as the page's language writes them, written here as Intl writes them
 * (tests/ui/i18n-format.test.tsx compares the two): the first Intl.NumberFormat or
 * DateTimeFormat a page makes costs ICU's set-up, felt on a phone on /billing's and the
 * gallery's first render (docs/benchmarks.md, frontend). `toLocaleString(language, …)` would also
 * build a new formatter on every call.
 */

/** The language the page runs in (initI18n), which every text on it is in. */
export function pageLanguage(): Language {
  return languages.find((language) => language === i18next.language) ?? DEFAULT_LANGUAGE;
}

const fractionFormats = new Map<Language, Intl.NumberFormat>();

/** A number as the language writes it; a fraction goes to Intl (no screen shows one yet). */
export function formatNumber(value: number, language: Language = pageLanguage()): string {
  if (Number.isSafeInteger(value)) return formatInteger(value, language);
  let format = fractionFormats.get(language);
  if (!format) {
    format = new Intl.NumberFormat(language);
    fractionFormats.set(language, format);
  }
  return format.format(value);
}

/** A decimal written with a point ("1750.00", an amount as the API sends it) in the language: 1 750,00. */
export function formatDecimalText(text: string, language: Language = pageLanguage()): string {
  return localizeDecimal(text, language);
}

/** A file size in the language (SPEC section 3's KB or MB with 2 decimals): 786,30 КБ, 786.30 KB. */
export function formatFileSize(bytes: number, language: Language = pageLanguage()): string {
  return fileSizeIn(bytes, language);
}

/**
 * longDate: 25 ноября 2026 г., November 25, 2026; dateTime: 25 нояб. 2026 г., 22:40,
 * Nov 25, 2026, 10:40 PM; shortDate: 25.11.2026, 11/25/2026.
 */
export type DateStyle = 'longDate' | 'dateTime' | 'shortDate';

/** Month names as CLDR writes them in dates: the genitive in Russian ("25 ноября"). */
const MONTHS: Record<Language, { long: readonly string[]; short: readonly string[] }> = {
  ru: {
    long: [
      'января',
      'февраля',
      'марта',
      'апреля',
      'мая',
      'июня',
      'июля',
      'августа',
      'сентября',
      'октября',
      'ноября',
      'декабря',
    ],
    short: ['янв.', 'февр.', 'мар.', 'апр.', 'мая', 'июн.', 'июл.', 'авг.', 'сент.', 'окт.', 'нояб.', 'дек.'],
  },
  en: {
    long: [
      'January',
      'February',
      'March',
      'April',
      'May',
      'June',
      'July',
      'August',
      'September',
      'October',
      'November',
      'December',
    ],
    short: ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'],
  },
};

const two = (n: number) => String(n).padStart(2, '0');

/** A date in local time in one of the styles; an invalid date reads "Invalid Date", as toLocaleString has it. */
export function formatDateAs(date: Date, style: DateStyle, language: Language = pageLanguage()): string {
  if (Number.isNaN(date.getTime())) return String(date);
  const months = MONTHS[language];
  const [day, month, year] = [date.getDate(), date.getMonth(), date.getFullYear()];
  const [hours, minutes] = [date.getHours(), date.getMinutes()];
  if (language === 'ru') {
    if (style === 'longDate') return `${day} ${months.long[month]} ${year} г.`;
    if (style === 'dateTime') return `${day} ${months.short[month]} ${year} г., ${two(hours)}:${two(minutes)}`;
    return `${two(day)}.${two(month + 1)}.${year}`;
  }
  if (style === 'longDate') return `${months.long[month]} ${day}, ${year}`;
  if (style === 'dateTime') {
    return `${months.short[month]} ${day}, ${year}, ${hours % 12 || 12}:${two(minutes)} ${hours < 12 ? 'AM' : 'PM'}`;
  }
  return `${month + 1}/${day}/${year}`;
}
