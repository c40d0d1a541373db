import i18next, { type i18n } from 'i18next';
import { billingEn } from './locales/billing.en';
import { billingRu } from './locales/billing.ru';
import { chatEn } from './locales/chat.en';
import { chatRu } from './locales/chat.ru';
import { commonEn } from './locales/common.en';
import { commonRu } from './locales/common.ru';
import { galleryEn } from './locales/gallery.en';
import { galleryRu } from './locales/gallery.ru';
import { generationEn } from './locales/generation.en';
import { generationRu } from './locales/generation.ru';
import { portraitEn } from './locales/portrait.en';
import { portraitRu } from './locales/portrait.ru';

export const languages = ['ru', 'en'] as const;
export type Language = (typeof languages)[number];
export const DEFAULT_LANGUAGE: Language = 'ru';
export const LANGUAGE_STORAGE_KEY = 'language';

/** Namespaces per feature; each feature adds its own pair of files. */
export const resources = {
  ru: {
    common: commonRu,
    generation: generationRu,
    chat: chatRu,
    billing: billingRu,
    gallery: galleryRu,
    portrait: portraitRu,
  },
  en: {
    common: commonEn,
    generation: generationEn,
    chat: chatEn,
    billing: billingEn,
    gallery: galleryEn,
    portrait: portraitEn,
  },
} as const;

export function storedLanguage(storage: Pick<Storage, 'getItem'> | undefined = globalThis.localStorage): Language {
  try {
    const value = storage?.getItem(LANGUAGE_STORAGE_KEY);
    return languages.find((l) => l === value) ?? DEFAULT_LANGUAGE;
  } catch {
    return DEFAULT_LANGUAGE;
  }
}

export async function initI18n(language: Language = storedLanguage()): Promise<i18n> {
  await i18next.init({
    lng: language,
    fallbackLng: DEFAULT_LANGUAGE,
    defaultNS: 'common',
    ns: Object.keys(resources.ru),
    resources,
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  document.documentElement.lang = language;
  return i18next;
}

/** SPEC: the choice is kept in browser storage and changing it reloads the page. */
export function switchLanguage(language: Language): void {
  globalThis.localStorage.setItem(LANGUAGE_STORAGE_KEY, language);
  globalThis.location.reload();
}

export { i18next };
