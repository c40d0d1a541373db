import i18next, { type i18n } from 'i18next';
import { interpolationFormatter } from './interpolation';
import { commonRu } from './locales/common.ru';
import type { texts as ruTexts } from './texts.ru';

export const languages = ['ru', 'en'] as const;
export type Language = (typeof languages)[number];
export const DEFAULT_LANGUAGE: Language = 'ru';
export const LANGUAGE_STORAGE_KEY = 'language';

/**
 * Every text of one language, namespaces per feature (each feature adds its own pair of
 * files under locales/). A page downloads one language only: Russian's `common` texts come
 * with the page, everything else is fetched for the chosen language. The login page opened
 * on its own needs `common` alone; the app loads all (src/app.tsx).
 */
export type Texts = typeof ruTexts;

let loaded: Texts | undefined;

/** The texts of the language the page runs in (after every namespace is loaded). */
export function currentTexts(): Texts {
  if (!loaded) throw new Error('the texts are not loaded yet (initI18n)');
  return loaded;
}

/** Which texts initI18n loads: the `common` namespace only, or every namespace. */
export type TextsNeeded = 'common' | 'all';

async function commonOf(language: Language): Promise<Texts['common']> {
  return language === 'en' ? (await import('./locales/common.en')).commonEn : commonRu;
}

async function allOf(language: Language): Promise<Texts> {
  return language === 'en' ? (await import('./texts.en')).texts : (await import('./texts.ru')).texts;
}

/** Adds every namespace of the page's language to what initI18n loaded. */
export async function loadAllTexts(): Promise<void> {
  if (loaded) return;
  const language = i18next.language as Language;
  const all = await allOf(language);
  // initI18n ran again meanwhile (another language): its texts are not these.
  if (loaded || i18next.language !== language) return;
  for (const [namespace, texts] of Object.entries(all)) {
    i18next.addResourceBundle(language, namespace, texts, true, true);
  }
  loaded = all;
}

export function storedLanguage(storage: Pick<Storage, 'getItem'> | undefined = globalThis.localStorage): Language {
  try {
    const value = storage?.getItem(LANGUAGE_STORAGE_KEY);
    return languages.find((l) => l === value) ?? DEFAULT_LANGUAGE;
  } catch {
    return DEFAULT_LANGUAGE;
  }
}

export async function initI18n(language: Language = storedLanguage(), needed: TextsNeeded = 'all'): Promise<i18n> {
  loaded = undefined;
  // Numbers in texts with the language's thousands separator (interpolation.ts).
  await i18next.use(interpolationFormatter).init({
    lng: language,
    fallbackLng: false,
    defaultNS: 'common',
    ns: ['common'],
    resources: { [language]: { common: await commonOf(language) } },
    interpolation: { escapeValue: false, alwaysFormat: true },
    returnNull: false,
  });
  if (needed === 'all') await loadAllTexts();
  document.documentElement.lang = language;
  return i18next;
}

/** SPEC: the choice is kept in browser storage and changing it reloads the page. */
export function switchLanguage(language: Language): void {
  globalThis.localStorage.setItem(LANGUAGE_STORAGE_KEY, language);
  globalThis.location.reload();
}

export { i18next };
