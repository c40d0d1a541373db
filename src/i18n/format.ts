import i18next from 'i18next';

/**
 * Numbers and dates as the page's language writes them. Russian and English are written by
 * hand, as Intl writes them (tests/ui/i18n-format.test.tsx compares the two); any other
 * language goes to an Intl formatter made once per language and style, since
 * `toLocaleString(language, …)` builds a new one on every call.
 */
const DATE_STYLES = {
  /** 25 ноября 2026 г., November 25, 2026 */
  longDate: { day: 'numeric', month: 'long', year: 'numeric' },
  /** 25 нояб. 2026 г., 22:40; Nov 25, 2026, 10:40 PM */
  dateTime: { dateStyle: 'medium', timeStyle: 'short' },
  /** 25.11.2026, 11/25/2026 */
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

/** Month names as CLDR writes them in dates: the genitive in Russian ("25 ноября"). */
const MONTHS: Record<string, { long: readonly string[]; short: readonly string[] }> = {
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

/** The three styles in our two languages, in local time, as Intl writes them. */
function ownDate(date: Date, style: DateStyle, language: string): string | undefined {
  const months = MONTHS[language];
  if (!months || Number.isNaN(date.getTime())) return undefined;
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

/**
 * A date as the language writes it. Russian and English are written here, for the same
 * reason as whole numbers: the first Intl.DateTimeFormat a page makes costs 18 ms of ICU
 * set-up on a desktop (72 on a phone), on /billing's and the gallery's first render.
 */
export function formatDateAs(date: Date, style: DateStyle, language = pageLanguage()): string {
  const own = ownDate(date, style, language);
  if (own !== undefined) return own;
  const key = `${language} ${style}`;
  let format = dateFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(language, DATE_STYLES[style]);
    dateFormats.set(key, format);
  }
  return format.format(date);
}
