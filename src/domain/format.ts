/**
 * Numbers as each interface language writes them, and the display helpers shared by the
 * gallery, the image modal and the download action. Isomorphic and free of i18n: the
 * language is an argument (src/i18n/format.ts passes the page's).
 */

/** The interface languages (src/i18n/index.ts's `languages`). */
export type NumberLanguage = 'ru' | 'en';

/**
 * Thousands separator and decimal mark, as Intl.NumberFormat writes them (Russian: a no-break
 * space and a comma; English: a comma and a point), from four digits on in both languages.
 */
const MARKS: Record<NumberLanguage, { group: string; decimal: string }> = {
  ru: { group: '\u00a0', decimal: ',' },
  en: { group: ',', decimal: '.' },
};

function groupDigits(digits: string, language: NumberLanguage): string {
  return digits.replace(/\B(?=(\d{3})+$)/g, MARKS[language].group);
}

/** A whole number with the language's thousands separator: 1 000 (ru), 1,000 (en). */
export function formatInteger(value: number, language: NumberLanguage): string {
  const digits = groupDigits(String(Math.abs(Math.trunc(value))), language);
  return value < 0 ? `-${digits}` : digits;
}

/**
 * A decimal written with a point ("1750.00", as toFixed and formatRub write it) in the
 * language: 1 750,00 (ru), 1,750.00 (en). Anything else is returned as it came.
 */
export function localizeDecimal(text: string, language: NumberLanguage): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction] = match;
  const fractionPart = fraction === undefined ? '' : `${MARKS[language].decimal}${fraction}`;
  return `${sign}${groupDigits(whole!, language)}${fractionPart}`;
}

/** `value` with exactly `digits` decimals in the language: formatFixed(12.036, 2, 'ru') is 12,04. */
export function formatFixed(value: number, digits: number, language: NumberLanguage): string {
  return localizeDecimal(value.toFixed(digits), language);
}

const SIZE_UNITS: Record<NumberLanguage, { kb: string; mb: string }> = {
  ru: { kb: 'КБ', mb: 'МБ' },
  en: { kb: 'KB', mb: 'MB' },
};

/**
 * SPEC section 3: KB with 2 decimals, or MB once the size reaches 1024 KB; written in the
 * language: 786,30 КБ and 12,04 МБ in Russian, 786.30 KB and 12.04 MB in English.
 */
export function formatFileSize(bytes: number, language: NumberLanguage): string {
  const kilobytes = bytes / 1024;
  const units = SIZE_UNITS[language];
  if (kilobytes >= 1024) return `${formatFixed(kilobytes / 1024, 2, language)} ${units.mb}`;
  return `${formatFixed(kilobytes, 2, language)} ${units.kb}`;
}

/** SPEC section 7: downloads are always saved under a .jpg name, whatever the format. */
export function downloadFileName(id: number | string, fileName: string): string {
  return `imagegen_${id}_${fileName}.jpg`;
}
