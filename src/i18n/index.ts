import i18next, { type i18n } from 'i18next';
import { texts as ruTexts } from './texts.ru';

export const languages = ['ru', 'en'] as const;
export type Language = (typeof languages)[number];
export const DEFAULT_LANGUAGE: Language = 'ru';
export const LANGUAGE_STORAGE_KEY = 'language';

/**
 * Every text of one language, namespaces per feature (each feature adds its own pair of
 * files under locales/). Russian, the default, comes with the app; English is fetched
 * when it is the chosen language, so nobody downloads both.
 */
export type Texts = typeof ruTexts;

let loaded: Texts = ruTexts;

/** The texts of the language the page runs in (after initI18n). */
export function currentTexts(): Texts {
  return loaded;
}

async function textsOf(language: Language): Promise<Texts> {
  return language === 'en' ? (await import('./texts.en')).texts : ruTexts;
}

export function storedLanguage(storage: Pick<Storage, 'getItem'> | undefined = globalThis.localStorage): Language {
  try {
    const value = storage?.getItem(LANGUAGE_STORAGE_KEY);
    return languages.find((l) => l === value) ?? DEFAULT_LANGUAGE;
  } catch {
    return DEFAULT_LANGUAGE;
  }
}

export async function initI18n(language: Language = storedLanguage()): Promise<i18n> {
  loaded = await textsOf(language);
  await i18next.init({
    lng: language,
    fallbackLng: false,
    defaultNS: 'common',
    ns: Object.keys(loaded),
    resources: { [language]: loaded },
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
