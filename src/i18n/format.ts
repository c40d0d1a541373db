import i18next from 'i18next';

/**
 * Numbers and dates as the page's language writes them. Each Intl formatter is made once per
 * language and style: `toLocaleString(language, …)` builds a new one on every call, which
 * costs a screen that formats a list (the gallery's dates, the ledger's rows) more than
 * rendering it.
 */
const DATE_STYLES = {
  /** 25 November 2026 */
  longDate: { day: 'numeric', month: 'long', year: 'numeric' },
  /** 25 Nov 2026, 22:40 */
  dateTime: { dateStyle: 'medium', timeStyle: 'short' },
  /** 25/11/2026 */
  shortDate: {},
} as const satisfies Record<string, Intl.DateTimeFormatOptions>;

export type DateStyle = keyof typeof DATE_STYLES;

const dateFormats = new Map<string, Intl.DateTimeFormat>();
const numberFormats = new Map<string, Intl.NumberFormat>();

/** The language the page runs in (initI18n), which every text on it is in. */
export function pageLanguage(): string {
  return i18next.language || 'ru';
}

/** Thousands separators of whole numbers: a no-break space in Russian, a comma in English. */
const GROUP_SEPARATORS: Record<string, string> = { ru: '\u00a0', en: ',' };

/**
 * A number as the language writes it. Whole numbers in our two languages are grouped here:
 * the first Intl.NumberFormat a page makes costs 20 ms of ICU set-up on a desktop (80 on
 * a phone), more than the screen that shows a few amounts.
 */
export function formatNumber(value: number, language = pageLanguage()): string {
  const separator = GROUP_SEPARATORS[language];
  if (separator !== undefined && Number.isSafeInteger(value)) {
    const digits = String(Math.abs(value)).replace(/\B(?=(\d{3})+$)/g, separator);
    return value < 0 ? `-${digits}` : digits;
  }
  let format = numberFormats.get(language);
  if (!format) {
    format = new Intl.NumberFormat(language);
    numberFormats.set(language, format);
  }
  return format.format(value);
}

export function formatDateAs(date: Date, style: DateStyle, language = pageLanguage()): string {
  const key = `${language} ${style}`;
  let format = dateFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(language, DATE_STYLES[style]);
    dateFormats.set(key, format);
  }
  return format.format(date);
}
